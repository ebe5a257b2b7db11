package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// The Conversations interface, kept on the local store: a conversation is
// its metadata and a list of items (the public item objects, as a
// response's input items are kept), which clients add to, list, retrieve
// and delete, and which a response created with `conversation` reads as
// the turns before its input and appends its input and output to.

// conversationObject is the public conversation object.
type conversationObject struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"`
	CreatedAt int64           `json:"created_at"`
	Metadata  json.RawMessage `json:"metadata"`
}

func toConversationObject(c *store.Conversation) conversationObject {
	return conversationObject{ID: c.ID, Object: "conversation", CreatedAt: c.CreatedAt, Metadata: c.Metadata}
}

// conversationBody is the body of conversation create, update and items
// create; the request schemas have checked its limits.
type conversationBody struct {
	Metadata json.RawMessage `json:"metadata"`
	Items    json.RawMessage `json:"items"`
}

func decodeConversationBody(body []byte) (*conversationBody, error) {
	var b conversationBody
	if len(body) == 0 {
		return &b, nil
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, upstreams.InvalidRequest("", "The request body is not a valid conversation request: %s.", schemas.DescribeJSONError(err))
	}
	return &b, nil
}

// conversationItems reads a request's `items` as input items are read,
// errors naming them as items[i].
func conversationItems(raw json.RawMessage) ([]store.ResponseItem, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	items, err := inputItems(raw, nil)
	if err != nil {
		if e := (*upstreams.Error)(nil); errors.As(err, &e) {
			renamed := *e
			if rest, ok := strings.CutPrefix(e.Param, "input"); ok {
				renamed.Param = "items" + rest
				renamed.Message = strings.ReplaceAll(e.Message, e.Param, renamed.Param)
			}
			return nil, &renamed
		}
		return nil, err
	}
	out := make([]store.ResponseItem, len(items))
	for i, it := range items {
		out[i] = store.ResponseItem{ID: it.id, Item: it.stored()}
	}
	return out, nil
}

func (l *Local) createConversation(w http.ResponseWriter, c *upstreams.Call) error {
	b, err := decodeConversationBody(c.Body)
	if err != nil {
		return err
	}
	items, err := conversationItems(b.Items)
	if err != nil {
		return err
	}
	conv := &store.Conversation{ID: store.NewID("conv_"), Owner: c.Principal.Owner, CreatedAt: store.Now(), Metadata: orEmpty(b.Metadata)}
	if err := l.store.CreateConversation(c.Request.Context(), conv, items); err != nil {
		return err
	}
	upstreams.WriteJSON(w, http.StatusOK, toConversationObject(conv))
	return nil
}

func (l *Local) retrieveConversation(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["conversation_id"]
	conv, err := l.store.GetConversation(c.Request.Context(), c.Principal.Owner, id)
	return writeConversation(w, conv, err, id)
}

// writeConversation answers the conversation a store call returned, or
// the 404 of its error.
func writeConversation(w http.ResponseWriter, conv *store.Conversation, err error, id string) error {
	if err != nil {
		return conversationNotFound(err, id)
	}
	upstreams.WriteJSON(w, http.StatusOK, toConversationObject(conv))
	return nil
}

func (l *Local) updateConversation(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["conversation_id"]
	b, err := decodeConversationBody(c.Body)
	if err != nil {
		return err
	}
	conv, err := l.store.UpdateConversation(c.Request.Context(), c.Principal.Owner, id, orEmpty(b.Metadata))
	return writeConversation(w, conv, err, id)
}

func (l *Local) deleteConversation(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["conversation_id"]
	if err := l.store.DeleteConversation(c.Request.Context(), c.Principal.Owner, id); err != nil {
		return conversationNotFound(err, id)
	}
	upstreams.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "object": "conversation.deleted", "deleted": true})
	return nil
}

func (l *Local) createConversationItems(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["conversation_id"]
	b, err := decodeConversationBody(c.Body)
	if err != nil {
		return err
	}
	items, err := conversationItems(b.Items)
	if err != nil {
		return err
	}
	if err := l.store.AddConversationItems(c.Request.Context(), c.Principal.Owner, id, items); err != nil {
		return conversationNotFound(err, id)
	}
	writeItemPage(w, items, false)
	return nil
}

func (l *Local) listConversationItems(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["conversation_id"]
	q, err := listQuery(c, 20, 100)
	if err != nil {
		return err
	}
	items, hasMore, err := l.store.ConversationItems(c.Request.Context(), c.Principal.Owner, id, q)
	if err != nil {
		return conversationNotFound(err, id)
	}
	writeItemPage(w, items, hasMore)
	return nil
}

// itemJSON is a stored item written as the public item it keeps.
type itemJSON store.ResponseItem

func (it itemJSON) MarshalJSON() ([]byte, error) { return it.Item, nil }

// writeItemPage writes items (a response's or a conversation's) as the
// public list of items.
func writeItemPage(w http.ResponseWriter, items []store.ResponseItem, hasMore bool) {
	data := make([]itemJSON, len(items))
	for i, it := range items {
		data[i] = itemJSON(it)
	}
	upstreams.WriteJSON(w, http.StatusOK, listPage(data, hasMore, func(it itemJSON) string { return it.ID }))
}

func (l *Local) retrieveConversationItem(w http.ResponseWriter, c *upstreams.Call) error {
	id, itemID := c.Params["conversation_id"], c.Params["item_id"]
	it, err := l.store.ConversationItem(c.Request.Context(), c.Principal.Owner, id, itemID)
	if err != nil {
		return l.conversationItemNotFound(c, err, id, itemID)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(append(it.Item, '\n'))
	return err
}

// deleteConversationItem answers with the conversation, as the public API does.
func (l *Local) deleteConversationItem(w http.ResponseWriter, c *upstreams.Call) error {
	id, itemID := c.Params["conversation_id"], c.Params["item_id"]
	if err := l.store.DeleteConversationItem(c.Request.Context(), c.Principal.Owner, id, itemID); err != nil {
		return l.conversationItemNotFound(c, err, id, itemID)
	}
	return l.retrieveConversation(w, c)
}

// conversationItemNotFound is the 404 of a missing item: the
// conversation's when it is the conversation that is missing.
func (l *Local) conversationItemNotFound(c *upstreams.Call, err error, id, itemID string) error {
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if _, cerr := l.store.GetConversation(c.Request.Context(), c.Principal.Owner, id); cerr != nil {
		return conversationNotFound(cerr, id)
	}
	return upstreams.NotFound("Item with id '%s' not found.", itemID)
}

func conversationNotFound(err error, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return upstreams.NotFound("Conversation with id '%s' not found.", id)
	}
	return err
}

// conversationRef is a response's conversation.
type conversationRef struct {
	ID string `json:"id"`
}

// history is what a response continues, its conversation's items or its
// previous_response_id's chain, with the error to answer should the chat
// made of it be longer than limit. The two exclude each other (the
// request schema's rule).
func (l *Local) history(c *upstreams.Call, req *responseRequest, limit int64) ([]json.RawMessage, *upstreams.Error, error) {
	id, err := conversationParam(req.Conversation)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case id != "":
		req.conversationID = id
		h, err := l.conversationHistory(c, id, limit)
		return h, conversationTooLong("conversation", "conversation '"+id+"'", limit), err
	case req.PreviousResponseID != "":
		h, err := l.conversation(c, req.PreviousResponseID, limit)
		return h, conversationTooLong("previous_response_id", "response '"+req.PreviousResponseID+"'", limit), err
	}
	return nil, nil, nil
}

// conversationParam reads responses.create's `conversation`: an ID or an
// object with one. "" when absent.
func conversationParam(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var id string
	if json.Unmarshal(raw, &id) != nil {
		var obj struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &obj) != nil {
			return "", upstreams.InvalidRequest("conversation", "conversation must be a conversation ID or an object with its id.")
		}
		id = obj.ID
	}
	if id == "" {
		return "", upstreams.InvalidRequest("conversation", "conversation must name a conversation.")
	}
	return id, nil
}

// conversationPage is how many items at a time a response reads of its
// conversation.
const conversationPage = 100

// conversationHistory is a conversation's items, oldest first, for a
// response to continue. A conversation holding more than limit bytes is
// refused with a 400 once that much is read, as a too long
// previous_response_id chain is: reading goes a page at a time, so no
// more than a page past the limit is ever loaded.
func (l *Local) conversationHistory(c *upstreams.Call, id string, limit int64) ([]json.RawMessage, error) {
	var out []json.RawMessage
	var size int64
	q := store.ListQuery{Limit: conversationPage}
	for {
		page, more, err := l.store.ConversationItems(c.Request.Context(), c.Principal.Owner, id, q)
		if errors.Is(err, store.ErrNotFound) {
			return nil, &upstreams.Error{Status: http.StatusNotFound, Type: upstreams.TypeInvalidRequest, Param: "conversation",
				Message: fmt.Sprintf("Conversation with id '%s' not found.", id)}
		}
		if err != nil {
			return nil, err
		}
		for _, it := range page {
			size += int64(len(it.Item))
			out = append(out, it.Item)
		}
		if size > limit {
			return nil, conversationTooLong("conversation", "conversation '"+id+"'", limit)
		}
		if !more || len(page) == 0 {
			return out, nil
		}
		q.After = page[len(page)-1].ID
	}
}

// appendToConversation adds a completed response's input and output items
// to its conversation.
func (l *Local) appendToConversation(c *upstreams.Call, id string, items []inputItem, resp *responseObject) error {
	add := make([]store.ResponseItem, 0, len(items)+len(resp.Output))
	for _, it := range items {
		add = append(add, store.ResponseItem{ID: it.id, Item: it.stored()})
	}
	for _, out := range resp.Output {
		var v struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			return fmt.Errorf("reading output item: %w", err)
		}
		add = append(add, store.ResponseItem{ID: v.ID, Item: out})
	}
	return conversationNotFound(l.store.AddConversationItems(c.Request.Context(), c.Principal.Owner, id, add), id)
}
