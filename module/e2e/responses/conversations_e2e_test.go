package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

// TestConversationsOffline runs the Conversations interface with openai-go
// against the quick start (the local store), with a second key of another
// owner: create with items and metadata, retrieve, update, items added,
// listed in pages, retrieved and deleted, delete (the items kept,
// reached by reference), isolation and every limit at its boundary.
func TestConversationsOffline(t *testing.T) {
	base := testgateway.Quickstart(t, "key "+gatewaytest.OtherKey+" {\n owner bob\n }\n")
	testConversations(t, base, testgateway.QuickstartDevKey)
}

// TestConversationsOfflineOnPostgres: the same on a PostgreSQL store.
func TestConversationsOfflineOnPostgres(t *testing.T) {
	base := gatewaytest.StartLocalOn(t, "postgres "+testpg.DSN(t))
	testConversations(t, base, gatewaytest.ClientKey)
}

func testConversations(t *testing.T, base, key string) {
	t.Run("RoundTrip", func(t *testing.T) { testConversationRoundTrip(t, gatewaytest.SDK(base, option.WithAPIKey(key))) })
	t.Run("Isolation", func(t *testing.T) {
		testConversationIsolation(t, gatewaytest.SDK(base, option.WithAPIKey(key)), gatewaytest.SDK(base, option.WithAPIKey(gatewaytest.OtherKey)))
	})
	t.Run("Limits", func(t *testing.T) { testConversationLimits(t, base, key) })
	t.Run("Responses", func(t *testing.T) { testResponsesInConversations(t, base, key) })
}

func userMessage(text string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleUser)
}

// messageText is the text of a conversation item that is a message.
func messageText(it conversations.ConversationItemUnion) string {
	var b strings.Builder
	for _, c := range it.AsMessage().Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func itemTexts(items []conversations.ConversationItemUnion) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = messageText(it)
	}
	return out
}

func testConversationRoundTrip(t *testing.T, client openai.Client) {
	ctx := context.Background()
	before := time.Now().Unix()
	conv, err := client.Conversations.New(ctx, conversations.ConversationNewParams{Metadata: map[string]string{"topic": "demo"},
		Items: []responses.ResponseInputItemUnionParam{userMessage("one"), userMessage("two")}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(conv.ID, "conv_") || conv.Object != "conversation" || conv.CreatedAt < before || conv.CreatedAt > time.Now().Unix() ||
		conv.Metadata.(map[string]any)["topic"] != "demo" {
		t.Fatalf("created %s", conv.RawJSON())
	}
	got, err := client.Conversations.Get(ctx, conv.ID)
	if err != nil || got.RawJSON() != conv.RawJSON() {
		t.Fatalf("retrieve: %v %s", err, got.RawJSON())
	}
	up, err := client.Conversations.Update(ctx, conv.ID, conversations.ConversationUpdateParams{Metadata: map[string]string{"topic": "project-x"}})
	if err != nil || up.Metadata.(map[string]any)["topic"] != "project-x" || up.CreatedAt != conv.CreatedAt {
		t.Fatalf("update: %v %s", err, up.RawJSON())
	}

	added, err := client.Conversations.Items.New(ctx, conv.ID, conversations.ItemNewParams{
		Items: []responses.ResponseInputItemUnionParam{userMessage("three"), userMessage("four"), userMessage("five")}})
	if err != nil || len(added.Data) != 3 || added.HasMore || added.FirstID != added.Data[0].ID || added.LastID != added.Data[2].ID ||
		!strings.HasPrefix(added.Data[0].ID, "msg_") || added.Data[0].Type != "message" || added.Data[0].Status != "completed" ||
		added.Data[0].Role != "user" || added.Data[0].AsMessage().Content[0].Type != "input_text" || messageText(added.Data[0]) != "three" {
		t.Fatalf("items added: %v %s", err, added.RawJSON())
	}

	// Newest first by default, paged with after; oldest first with asc.
	page, err := client.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{Limit: openai.Int(2)})
	if err != nil || !page.HasMore || fmt.Sprint(itemTexts(page.Data)) != "[five four]" {
		t.Fatalf("page 1: %v %s", err, page.RawJSON())
	}
	page, err = page.GetNextPage()
	if err != nil || !page.HasMore || fmt.Sprint(itemTexts(page.Data)) != "[three two]" {
		t.Fatalf("page 2: %v %s", err, page.RawJSON())
	}
	page, err = page.GetNextPage()
	if err != nil || page.HasMore || fmt.Sprint(itemTexts(page.Data)) != "[one]" {
		t.Fatalf("page 3: %v %s", err, page.RawJSON())
	}
	var asc []string
	iter := client.Conversations.Items.ListAutoPaging(ctx, conv.ID, conversations.ItemListParams{Order: conversations.ItemListParamsOrderAsc, Limit: openai.Int(2),
		Include: []responses.ResponseIncludable{responses.ResponseIncludableMessageInputImageImageURL}})
	for iter.Next() {
		asc = append(asc, messageText(iter.Current()))
	}
	if iter.Err() != nil || fmt.Sprint(asc) != "[one two three four five]" {
		t.Fatalf("asc, auto-paged: %v %v", iter.Err(), asc)
	}

	item, err := client.Conversations.Items.Get(ctx, conv.ID, added.Data[1].ID, conversations.ItemGetParams{})
	if err != nil || item.ID != added.Data[1].ID || messageText(*item) != "four" {
		t.Fatalf("item: %v %+v", err, item)
	}
	after, err := client.Conversations.Items.Delete(ctx, conv.ID, added.Data[1].ID)
	if err != nil || after.ID != conv.ID || after.Object != "conversation" {
		t.Fatalf("item delete answers the conversation: %v %+v", err, after)
	}
	_, err = client.Conversations.Items.Get(ctx, conv.ID, added.Data[1].ID, conversations.ItemGetParams{})
	notFound(t, err, "")
	_, err = client.Conversations.Items.Delete(ctx, conv.ID, added.Data[1].ID)
	notFound(t, err, "")

	deleted, err := client.Conversations.Delete(ctx, conv.ID)
	if err != nil || deleted.ID != conv.ID || deleted.Object != "conversation.deleted" || !deleted.Deleted {
		t.Fatalf("delete: %v %+v", err, deleted)
	}
	_, err = client.Conversations.Get(ctx, conv.ID)
	notFound(t, err, "")
	_, err = client.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{})
	notFound(t, err, "")
	_, err = client.Conversations.Items.Get(ctx, conv.ID, added.Data[0].ID, conversations.ItemGetParams{})
	notFound(t, err, "")
	_, err = client.Conversations.Delete(ctx, conv.ID)
	notFound(t, err, "")
	// Its items are kept, as the public API keeps them: a response reaches
	// one by reference; the item deleted from it before is gone.
	ref, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: responses.ResponseNewParamsInputUnion{
		OfInputItemList: responses.ResponseInputParam{responses.ResponseInputItemParamOfItemReference(added.Data[0].ID)}}})
	if err != nil {
		t.Fatalf("a reference to an item of the deleted conversation: %v", err)
	}
	refItems, err := client.Responses.InputItems.List(ctx, ref.ID, responses.InputItemListParams{})
	if err != nil || len(refItems.Data) != 1 || refItems.Data[0].ID != added.Data[0].ID || !strings.Contains(refItems.Data[0].RawJSON(), `"three"`) {
		t.Fatalf("the referenced item of the deleted conversation: %v %s", err, refItems.RawJSON())
	}
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: responses.ResponseNewParamsInputUnion{
		OfInputItemList: responses.ResponseInputParam{responses.ResponseInputItemParamOfItemReference(added.Data[1].ID)}}})
	if e := (*openai.Error)(nil); !errors.As(err, &e) || e.StatusCode != 404 || e.Param != "input[0].id" {
		t.Fatalf("a reference to the item deleted from the conversation: want 404 naming input[0].id, got %v", err)
	}

	// Without a body, a conversation starts empty with empty metadata.
	empty, err := client.Conversations.New(ctx, conversations.ConversationNewParams{})
	if err != nil || string(mustJSON(t, empty.Metadata)) != "{}" {
		t.Fatalf("empty conversation: %v %s", err, empty.RawJSON())
	}
	none, err := client.Conversations.Items.List(ctx, empty.ID, conversations.ItemListParams{})
	if err != nil || len(none.Data) != 0 || none.HasMore || !strings.Contains(none.RawJSON(), `"first_id":null`) {
		t.Fatalf("empty list: %v %s", err, none.RawJSON())
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testConversationIsolation: another owner's key can neither read, change,
// list, add to, nor delete a conversation or its items, nor continue it in
// a response (404, as for a missing one), and it stays its owner's.
func testConversationIsolation(t *testing.T, client, other openai.Client) {
	ctx := context.Background()
	conv, err := client.Conversations.New(ctx, conversations.ConversationNewParams{Items: []responses.ResponseInputItemUnionParam{userMessage("mine")}})
	if err != nil {
		t.Fatal(err)
	}
	items, err := client.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{})
	if err != nil || len(items.Data) != 1 {
		t.Fatalf("items: %v", err)
	}
	itemID := items.Data[0].ID
	_, err = other.Conversations.Get(ctx, conv.ID)
	notFound(t, err, "")
	_, err = other.Conversations.Update(ctx, conv.ID, conversations.ConversationUpdateParams{Metadata: map[string]string{"x": "y"}})
	notFound(t, err, "")
	_, err = other.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{})
	notFound(t, err, "")
	_, err = other.Conversations.Items.New(ctx, conv.ID, conversations.ItemNewParams{Items: []responses.ResponseInputItemUnionParam{userMessage("theirs")}})
	notFound(t, err, "")
	_, err = other.Conversations.Items.Get(ctx, conv.ID, itemID, conversations.ItemGetParams{})
	notFound(t, err, "")
	_, err = other.Conversations.Items.Delete(ctx, conv.ID, itemID)
	notFound(t, err, "")
	_, err = other.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("x"),
		Conversation: responses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)}})
	notFound(t, err, "")
	_, err = other.Conversations.Delete(ctx, conv.ID)
	notFound(t, err, "")
	got, err := client.Conversations.Get(ctx, conv.ID)
	if err != nil || string(mustJSON(t, got.Metadata)) != "{}" {
		t.Fatalf("the owner's conversation after the other's attempts: %v %s", err, got.RawJSON())
	}
	all, err := client.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{})
	if err != nil || fmt.Sprint(itemTexts(all.Data)) != "[mine]" {
		t.Fatalf("the owner's items after the other's attempts: %v %s", err, all.RawJSON())
	}
}

// testConversationLimits: metadata (16 pairs, keys of 64 characters,
// values of 512), 20 items a call, the list's limit of 1 to 100, the
// required bodies and fields, and malformed items: accepted at the limit,
// 400 naming the parameter past it.
func testConversationLimits(t *testing.T, base, key string) {
	h := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
	call := func(method, path, body string) (int, string) {
		t.Helper()
		resp, env := gatewaytest.RawRequest(t, method, base+"/v1"+path, body, h)
		param := ""
		if env.Error.Param != nil {
			param = *env.Error.Param
		}
		return resp.StatusCode, param
	}
	pairs := func(n, keyLen, valueLen int) string {
		m := map[string]string{}
		for i := range n {
			k := fmt.Sprintf("%02d", i) + strings.Repeat("k", keyLen-2)
			m[k] = strings.Repeat("v", valueLen)
		}
		return string(mustJSON(t, map[string]any{"metadata": m}))
	}
	items := func(n int) string {
		list := make([]any, n)
		for i := range list {
			list[i] = map[string]any{"role": "user", "content": fmt.Sprint(i)}
		}
		return string(mustJSON(t, map[string]any{"items": list}))
	}
	var conv struct {
		ID string `json:"id"`
	}
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/conversations", pairs(16, 64, 512), h)
	if resp.StatusCode != 200 || json.Unmarshal(gatewaytest.LastBody, &conv) != nil {
		t.Fatalf("16 pairs at the key and value limits: %d %s", resp.StatusCode, gatewaytest.LastBody)
	}
	cases := []struct {
		method, path, body string
		status             int
		param              string
	}{
		{"POST", "/conversations", pairs(17, 4, 4), 400, "metadata"},
		{"POST", "/conversations", pairs(1, 65, 4), 400, "metadata"},
		{"POST", "/conversations", pairs(1, 4, 513), 400, "metadata.00kk"},
		{"POST", "/conversations", items(20), 200, ""},
		{"POST", "/conversations", items(21), 400, "items"},
		{"POST", "/conversations", `{"items":[{"role":"robot","content":"x"}]}`, 400, "items[0].role"},
		{"POST", "/conversations", `{"items":[{"type":"message","role":"user","content":7}]}`, 400, "items[0].content"},
		{"POST", "/conversations", `{"items":"x"}`, 400, "items"},
		{"POST", "/conversations/" + conv.ID, pairs(16, 64, 512), 200, ""},
		{"POST", "/conversations/" + conv.ID, pairs(17, 4, 4), 400, "metadata"},
		{"POST", "/conversations/" + conv.ID, `{}`, 400, "metadata"},
		{"POST", "/conversations/" + conv.ID + "/items", items(20), 200, ""},
		{"POST", "/conversations/" + conv.ID + "/items", items(21), 400, "items"},
		{"POST", "/conversations/" + conv.ID + "/items", `{}`, 400, "items"},
		{"POST", "/conversations/" + conv.ID + "/items", `{"items":[{"type":"function_call","name":"f"}]}`, 400, "items[0].call_id"},
		{"GET", "/conversations/" + conv.ID + "/items?limit=100", "", 200, ""},
		{"GET", "/conversations/" + conv.ID + "/items?limit=1", "", 200, ""},
		{"GET", "/conversations/" + conv.ID + "/items?limit=101", "", 400, "limit"},
		{"GET", "/conversations/" + conv.ID + "/items?limit=0", "", 400, "limit"},
		{"GET", "/conversations/" + conv.ID + "/items?order=sideways", "", 400, "order"},
	}
	for _, c := range cases {
		status, param := call(c.method, c.path, c.body)
		if status != c.status || param != c.param {
			t.Errorf("%s %s %.60s: got %d param %q, want %d %q: %s", c.method, c.path, c.body, status, param, c.status, c.param, gatewaytest.LastBody)
		}
	}
	var page struct {
		Data []json.RawMessage `json:"data"`
	}
	resp, _ = gatewaytest.RawRequest(t, "GET", base+"/v1/conversations/"+conv.ID+"/items?limit=100", "", h)
	if json.Unmarshal(gatewaytest.LastBody, &page) != nil || len(page.Data) != 20 {
		t.Fatalf("the 20 items added: %d %s", resp.StatusCode, gatewaytest.LastBody)
	}
}
