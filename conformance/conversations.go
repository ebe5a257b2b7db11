package conformance

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The Conversations interface (public API, `POST /conversations` and its
// siblings), and responses created in a conversation: each check names
// the sentence of the public API it enforces.

const (
	specConversation        = "Create a conversation (optional `items`, up to 20, and `metadata`); retrieve, update (`metadata`, required) and delete it. The conversation object has `id`, `object` \"conversation\", `created_at` in seconds since the Unix epoch and `metadata`; a deleted one answers `object` \"conversation.deleted\" and `deleted` true, and is then unknown (404)."
	specConversationItems   = "Create items in a conversation (`items`, up to 20) and list them: a list with `first_id`, `last_id` and `has_more`, paged by `after`, `limit` (1-100, default 20) and `order` (default desc). Retrieve an item; delete an item, which answers the conversation."
	specConversationInResp  = "`conversation`: items from this conversation are prepended to `input_items` for this response request; input items and output items from this response are automatically added to this conversation after this response completes. (Public API: with `previous_response_id` too it is a 400.)"
	conversationsPath       = "/v1/conversations"
	conversationsIsolation  = "Conversations: " + specIsolation
	conversationsCreateOp   = "conversations.create"
	conversationItemsListOp = "conversations.items.list"
)

type conversationObject struct {
	ID        string            `json:"id"`
	Object    string            `json:"object"`
	CreatedAt int64             `json:"created_at"`
	Metadata  map[string]string `json:"metadata"`
}

type conversationItemPage struct {
	Data    []outputItem `json:"data"`
	FirstID *string      `json:"first_id"`
	LastID  *string      `json:"last_id"`
	HasMore bool         `json:"has_more"`
}

// texts is the text of each message of the page, the type of other items.
func (p conversationItemPage) texts() []string {
	out := make([]string, 0, len(p.Data))
	for _, it := range p.Data {
		if it.Type != "message" {
			out = append(out, it.Type)
			continue
		}
		var b strings.Builder
		for _, c := range it.Content {
			b.WriteString(c.Text)
		}
		out = append(out, b.String())
	}
	return out
}

func userItems(texts ...string) []any {
	out := make([]any, len(texts))
	for i, s := range texts {
		out[i] = map[string]any{"type": "message", "role": "user", "content": s}
	}
	return out
}

// conversation creates a conversation that must succeed, deleted when the
// check ends.
func (t *T) conversation(body map[string]any) (*exchange, *conversationObject) {
	var c conversationObject
	ex := t.created(conversationsCreateOp, conversationsPath, body, &c)
	t.cleanup(request{method: http.MethodDelete, path: conversationsPath + "/" + c.ID})
	return ex, &c
}

// conversationItems lists a conversation's items with the query.
func (t *T) conversationItems(id string, query url.Values) (*exchange, conversationItemPage) {
	ex := t.do(request{op: conversationItemsListOp, method: http.MethodGet, path: conversationsPath + "/" + id + "/items", query: query})
	var p conversationItemPage
	if t.expectStatus(ex, http.StatusOK) {
		t.decode(ex, &p)
	}
	return ex, p
}

var conversationChecks = []Check{
	{ID: "conversations.lifecycle", Area: AreaConversations, Spec: specConversation,
		run: func(t *T) {
			ex, c := t.conversation(map[string]any{"metadata": map[string]any{"topic": "demo"}, "items": userItems("hello")})
			_, again := t.conversation(map[string]any{})
			t.expect(c.Object == "conversation" && c.ID != "" && again.ID != c.ID, ex, "object conversation with a unique id", "object %q, ids %q and %q", c.Object, c.ID, again.ID)
			t.expect(c.CreatedAt > 1e9 && c.CreatedAt < 1e11, ex, "created_at in seconds", "%d", c.CreatedAt)
			t.expect(c.Metadata["topic"] == "demo", ex, `metadata {"topic":"demo"}`, "%s", jsonText(c.Metadata))
			path := conversationsPath + "/" + c.ID
			ex = t.do(request{op: "conversations.retrieve", method: http.MethodGet, path: path})
			var got conversationObject
			if t.expectStatus(ex, http.StatusOK) {
				t.decode(ex, &got)
				t.expect(jsonText(got) == jsonText(c), ex, "the conversation created", "%s", jsonText(got))
			}
			ex = t.do(request{op: "conversations.update", method: http.MethodPost, path: path, json: map[string]any{"metadata": map[string]any{"topic": "project-x"}}})
			if t.expectStatus(ex, http.StatusOK) {
				t.decode(ex, &got)
				t.expect(got.Metadata["topic"] == "project-x" && got.ID == c.ID, ex, `metadata {"topic":"project-x"}`, "%s", jsonText(got))
			}
			t.expectParam(t.do(request{method: http.MethodPost, path: path, json: map[string]any{}}), "metadata")
			ex = t.do(request{op: "conversations.delete", method: http.MethodDelete, path: path})
			var deleted struct {
				ID      string `json:"id"`
				Object  string `json:"object"`
				Deleted bool   `json:"deleted"`
			}
			if t.expectStatus(ex, http.StatusOK) {
				t.decode(ex, &deleted)
				t.expect(deleted.ID == c.ID && deleted.Object == "conversation.deleted" && deleted.Deleted, ex, "conversation.deleted, deleted true", "%s", jsonText(deleted))
			}
			t.expectStatus(t.do(request{method: http.MethodGet, path: path}), http.StatusNotFound)
			t.expectStatus(t.do(request{method: http.MethodDelete, path: path}), http.StatusNotFound)
			t.expectParam(t.do(request{method: http.MethodPost, path: conversationsPath, json: map[string]any{"items": userItems(strings.Split(strings.Repeat("x,", 20)+"x", ",")...)}}), "items")
		}},
	{ID: "conversations.items", Area: AreaConversations, Spec: specConversationItems,
		run: func(t *T) {
			_, c := t.conversation(map[string]any{"items": userItems("one")})
			path := conversationsPath + "/" + c.ID + "/items"
			ex := t.do(request{op: "conversations.items.create", method: http.MethodPost, path: path, json: map[string]any{"items": userItems("two", "three")}})
			var added conversationItemPage
			if t.expectStatus(ex, http.StatusOK) {
				t.decode(ex, &added)
				ok := len(added.Data) == 2 && added.FirstID != nil && *added.FirstID == added.Data[0].ID && added.LastID != nil && *added.LastID == added.Data[1].ID && !added.HasMore
				t.expect(ok && jsonText(added.texts()) == `["two","three"]`, ex, "the two items added, with first_id, last_id and has_more false", "%s", string(ex.body))
			}
			ex, first := t.conversationItems(c.ID, url.Values{"limit": {"2"}})
			t.expect(jsonText(first.texts()) == `["three","two"]` && first.HasMore, ex, `the newest two ("three", "two") and has_more`, "%s, has_more %v", jsonText(first.texts()), first.HasMore)
			if len(first.Data) == 2 {
				ex, rest := t.conversationItems(c.ID, url.Values{"limit": {"2"}, "after": {first.Data[1].ID}})
				t.expect(jsonText(rest.texts()) == `["one"]` && !rest.HasMore, ex, `the last ("one") without has_more`, "%s, has_more %v", jsonText(rest.texts()), rest.HasMore)
			}
			ex, asc := t.conversationItems(c.ID, url.Values{"order": {"asc"}})
			t.expect(jsonText(asc.texts()) == `["one","two","three"]`, ex, `oldest first with order asc`, "%s", jsonText(asc.texts()))
			t.expectParam(t.do(request{method: http.MethodGet, path: path, query: url.Values{"limit": {"101"}}}), "limit")
			t.expectParam(t.do(request{method: http.MethodPost, path: path, json: map[string]any{"items": userItems(strings.Split(strings.Repeat("x,", 20)+"x", ",")...)}}), "items")
			if len(asc.Data) != 3 {
				return
			}
			item := path + "/" + asc.Data[1].ID
			ex = t.do(request{op: "conversations.items.retrieve", method: http.MethodGet, path: item})
			var got outputItem
			if t.expectStatus(ex, http.StatusOK) {
				t.decode(ex, &got)
				t.expect(got.ID == asc.Data[1].ID && got.Type == "message", ex, "the item "+asc.Data[1].ID, "%s", string(ex.body))
			}
			ex = t.do(request{op: "conversations.items.delete", method: http.MethodDelete, path: item})
			var conv conversationObject
			if t.expectStatus(ex, http.StatusOK) {
				t.decode(ex, &conv)
				t.expect(conv.ID == c.ID && conv.Object == "conversation", ex, "the conversation", "%s", string(ex.body))
			}
			t.expectStatus(t.do(request{method: http.MethodGet, path: item}), http.StatusNotFound)
			ex, after := t.conversationItems(c.ID, url.Values{"order": {"asc"}})
			t.expect(jsonText(after.texts()) == `["one","three"]`, ex, `the items left ("one", "three")`, "%s", jsonText(after.texts()))
		}},
	{ID: "conversations.responses", Area: AreaConversations, Requires: []string{AreaResponses}, Spec: specConversationInResp,
		run: func(t *T) {
			_, c := t.conversation(map[string]any{"items": userItems("My name is Ada.")})
			ex, r := t.response(t.responseBody("What is my name?", "conversation", c.ID))
			text := ""
			for _, it := range r.items() {
				if it.Type == "message" && len(it.Content) > 0 {
					text += it.Content[0].Text
				}
			}
			t.expect(text != "", ex, "a message output item", "%s", jsonText(r.Output))
			ex, items := t.conversationItems(c.ID, url.Values{"order": {"asc"}})
			want := jsonText([]string{"My name is Ada.", "What is my name?", text})
			t.expect(jsonText(items.texts()) == want, ex, "the conversation's item, the input and the output: "+want, "%s", jsonText(items.texts()))
			_, prev := t.response(t.responseBody("x"))
			ex = t.do(request{method: http.MethodPost, path: responsesPath, json: t.responseBody("x", "conversation", c.ID, "previous_response_id", prev.ID)})
			t.expectStatus(ex, http.StatusBadRequest)
			ex = t.do(request{method: http.MethodPost, path: responsesPath, json: t.responseBody("x", "conversation", "conv_conformance_never_made")})
			t.expectStatus(ex, http.StatusNotFound)
		}},
	{ID: "conversations.isolation", Area: AreaConversations, Spec: conversationsIsolation,
		run: func(t *T) {
			t.needSecondKey()
			_, c := t.conversation(map[string]any{"items": userItems("mine")})
			ex, items := t.conversationItems(c.ID, nil)
			if len(items.Data) != 1 {
				t.fatal(ex.evidence("one item", fmt.Sprint(len(items.Data))))
			}
			path := conversationsPath + "/" + c.ID
			item := path + "/items/" + items.Data[0].ID
			t.expectHidden(request{method: http.MethodGet, path: path},
				request{method: http.MethodPost, path: path, json: map[string]any{"metadata": map[string]any{"x": "y"}}},
				request{method: http.MethodGet, path: path + "/items"},
				request{method: http.MethodPost, path: path + "/items", json: map[string]any{"items": userItems("theirs")}},
				request{method: http.MethodGet, path: item},
				request{method: http.MethodDelete, path: item},
				request{method: http.MethodDelete, path: path})
			ex, after := t.conversationItems(c.ID, url.Values{"order": {"asc"}})
			t.expect(jsonText(after.texts()) == `["mine"]`, ex, `the owner's items unchanged ("mine")`, "%s", jsonText(after.texts()))
		}},
}

// conversationSentences are the promises of the Conversations interface
// the catalogue holds, from the public API's description.
var conversationSentences = []Sentence{
	{"api.conversations.object", srcOpenAPI + " createConversation, getConversation, updateConversation, deleteConversation", specConversation, []string{"conversations.lifecycle"}, ""},
	{"api.conversations.items", srcOpenAPI + " createConversationItems, listConversationItems, getConversationItem, deleteConversationItem", specConversationItems, []string{"conversations.items"}, ""},
	{"api.conversations.responses", srcOpenAPI + " CreateResponse.conversation", specConversationInResp, []string{"conversations.responses"}, ""},
	{"api.conversations.isolation", srcOpenAPI + " Conversations", conversationsIsolation, []string{"conversations.isolation"}, ""},
}

func init() { sentences = append(sentences, conversationSentences...) }
