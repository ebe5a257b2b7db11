package openapi

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestContractMatchesTheDescription re-extracts contract.json from the
// OpenAPI description beside the repository (../shared/spec, where the
// project keeps its specification) and requires the embedded one to be
// the same, so the contract never drifts from the description.
func TestContractMatchesTheDescription(t *testing.T) {
	spec := "../../../shared/spec/openai-openapi.yaml"
	if _, err := os.Stat(spec); err != nil {
		if os.Getenv("CI") != "" || os.Getenv("MODELGATE_REQUIRE_SERVICES") != "" {
			t.Fatalf("the OpenAPI description is not beside the repository: %v", err)
		}
		t.Skipf("no OpenAPI description at %s", spec)
	}
	dir := t.TempDir()
	out := dir + "/contract.json"
	cmd := goRun(t, "./extract", "-spec", spec, "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("extract: %v\n%s", err, b)
	}
	got, _ := os.ReadFile(out)
	if string(got) != string(contractJSON) {
		t.Fatal("contract.json differs from what ./extract makes of the description: run go generate ./schemas/openapi")
	}
}

func TestFindPrefersLiteralSegments(t *testing.T) {
	for _, c := range []struct{ method, path, id string }{
		{"POST", "/v1/chat/completions", "createChatCompletion"},
		{"GET", "/v1/files/file-abc", "retrieveFile"},
		{"POST", "/v1/responses/compact", "Compactconversation"},
		{"GET", "/v1/responses/resp_1/input_items", "listInputItems"},
		{"GET", "/v1/vector_stores/vs_1/files/file-1", "getVectorStoreFile"},
	} {
		o := Find(c.method, c.path)
		if o == nil || !strings.EqualFold(o.OperationID, c.id) {
			t.Errorf("Find(%s %s) = %+v, want %s", c.method, c.path, o, c.id)
		}
	}
	if o := Find("GET", "/v1/no/such/path"); o != nil {
		t.Errorf("a path outside the API found %s", o.OperationID)
	}
	if o := Find("GET", "/v1/files/"); o == nil || o.OperationID != "listFiles" {
		t.Errorf("a trailing slash: %+v", o)
	}
}

// TestCheckReplyFindsWhatTheContractForbids: a conforming reply has no
// findings; a required-but-nullable member missing, a wrong enum and a
// wrong type each have one naming the field.
func TestCheckReplyFindsWhatTheContractForbids(t *testing.T) {
	o := Find("POST", "/v1/embeddings")
	good := `{"object":"list","model":"m","data":[{"object":"embedding","index":0,"embedding":[0.1]}],"usage":{"prompt_tokens":1,"total_tokens":1}}`
	if f := o.CheckReply([]byte(good)); len(f) > 0 {
		t.Fatalf("a conforming reply: %v", f)
	}
	for _, c := range []struct{ body, field string }{
		{`{"object":"list","model":"m","data":[{"object":"embedding","index":0,"embedding":[0.1]}]}`, "usage"},
		{`{"object":"list","model":"m","data":[{"object":"vector","index":0,"embedding":[0.1]}],"usage":{"prompt_tokens":1,"total_tokens":1}}`, "data[0].object"},
		{`{"object":"list","model":"m","data":[{"object":"embedding","index":"0","embedding":[0.1]}],"usage":{"prompt_tokens":1,"total_tokens":1}}`, "data[0].index"},
	} {
		f := o.CheckReply([]byte(c.body))
		if len(f) == 0 || !strings.Contains(f[0].String(), c.field) {
			t.Errorf("%s: findings %v, want one about %s", c.body, f, c.field)
		}
	}
	chunk := Find("POST", "/v1/chat/completions")
	if f := chunk.CheckEvent([]byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":null}]}`)); len(f) > 0 {
		t.Errorf("a conforming chunk: %v", f)
	}
	if f := chunk.CheckEvent([]byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{}}]}`)); len(f) == 0 {
		t.Error("a chunk's choice without its nullable finish_reason passed")
	}
}

func TestFieldsAndValues(t *testing.T) {
	fields := Find("POST", "/v1/chat/completions").Fields()
	var paths []string
	unixtime := map[string]bool{}
	for _, f := range fields {
		paths = append(paths, f.Path)
		unixtime[f.Path] = f.Unixtime
	}
	for _, want := range []string{"id", "choices[].message.content", "choices[].message.tool_calls[].function.name", "usage.prompt_tokens_details.cached_tokens", "created"} {
		if !slices.Contains(paths, want) {
			t.Errorf("chat completion fields lack %s", want)
		}
	}
	if !unixtime["created"] {
		t.Error("created is not marked a Unix timestamp")
	}
	var doc any
	_ = json.Unmarshal([]byte(`{"a":[{"b":1},{"b":2},{"c":3}],"d":{"e":null}}`), &doc)
	if got := Present(doc); !slices.Equal(got, []string{"a", "a[]", "a[].b", "a[].c", "d", "d.e"}) {
		t.Errorf("Present = %v", got)
	}
	if got := Values(doc, "a[].b"); len(got) != 2 {
		t.Errorf("Values(a[].b) = %v", got)
	}
}

// TestRelaxedPlaces: an empty page may have null cursors, a page with
// items may not; a base64 embedding is a string.
func TestRelaxedPlaces(t *testing.T) {
	list := Find("GET", "/v1/files")
	if f := list.CheckReply([]byte(`{"object":"list","data":[],"first_id":null,"last_id":null,"has_more":false}`)); len(f) > 0 {
		t.Errorf("an empty page with null cursors: %v", f)
	}
	item := `{"id":"file-1","object":"file","bytes":1,"created_at":1700000000,"filename":"a","purpose":"batch","status":"processed"}`
	if f := list.CheckReply([]byte(`{"object":"list","data":[` + item + `],"first_id":null,"last_id":"file-1","has_more":false}`)); len(f) == 0 {
		t.Error("a page with items and a null first_id passed")
	}
	emb := Find("POST", "/v1/embeddings")
	if f := emb.CheckReply([]byte(`{"object":"list","model":"m","data":[{"object":"embedding","index":0,"embedding":"AAAAAA=="}],"usage":{"prompt_tokens":1,"total_tokens":1}}`)); len(f) > 0 {
		t.Errorf("a base64 embedding: %v", f)
	}
}
