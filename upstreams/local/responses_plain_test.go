package local

import (
	"encoding/json"
	"testing"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// TestPlainItemsAreStoredAsMessageItemStoresThem: a message of one string
// read from the decoded document is stored byte for byte as the general
// reading stores it, for every role, with and without an ID, whatever
// its text holds; an item of any other shape is left to the general
// reading.
func TestPlainItemsAreStoredAsMessageItemStoresThem(t *testing.T) {
	for _, role := range []string{"user", "system", "developer", "assistant"} {
		for _, text := range []string{"a", "", `<b>&"quoted"\</b>`, "é \u2028 \U0001F600 \x01"} {
			for _, id := range []string{"", "msg_given"} {
				item := map[string]any{"role": role, "content": text}
				if id != "" {
					item["id"], item["type"] = id, "message"
				}
				raw, _ := json.Marshal([]any{item})
				var decoded []any
				json.Unmarshal(raw, &decoded)
				got, ok := plainItems(decoded, store.NewIDSequence())
				if !ok || len(got) != 1 || !got[0].plain || got[0].text != text || got[0].role != role {
					t.Fatalf("%s %q %q: not read as plain: %+v", role, text, id, got)
				}
				want, err := messageItem(itemFields{Role: role, ID: got[0].id, Content: mustJSON(text)}, "input[0]", store.NewIDSequence())
				if err != nil || string(got[0].stored()) != string(want.raw) {
					t.Fatalf("%s %q %q:\n%s\nwant\n%s (%v)", role, text, id, got[0].stored(), want.raw, err)
				}
				if id != "" && got[0].id != id {
					t.Fatalf("id %q, want %q", got[0].id, id)
				}
			}
		}
	}
	for _, item := range []any{
		map[string]any{"role": "tool", "content": "x"},
		map[string]any{"role": "user", "content": []any{}},
		map[string]any{"role": "user", "content": "x", "type": "function_call"},
		map[string]any{"role": "user", "content": "x", "name": "n"},
		map[string]any{"role": "user", "content": "x", "id": ""},
		"just a string",
	} {
		if _, ok := plainItems([]any{map[string]any{"role": "user", "content": "x"}, item}, store.NewIDSequence()); ok {
			t.Fatalf("%v read as plain", item)
		}
	}
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
