package local

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

type threadObject struct {
	ID            string          `json:"id"`
	Object        string          `json:"object"`
	CreatedAt     int64           `json:"created_at"`
	Metadata      json.RawMessage `json:"metadata"`
	ToolResources json.RawMessage `json:"tool_resources"`
}

func toThreadObject(t *store.Thread) threadObject {
	return threadObject{ID: t.ID, Object: "thread", CreatedAt: t.CreatedAt, Metadata: t.Metadata, ToolResources: t.ToolResources}
}

// threadBody is the body of thread create and update.
type threadBody struct {
	Messages []struct {
		Role        string          `json:"role"`
		Content     json.RawMessage `json:"content"`
		Attachments json.RawMessage `json:"attachments"`
		Metadata    json.RawMessage `json:"metadata"`
	} `json:"messages"`
	Metadata      json.RawMessage `json:"metadata"`
	ToolResources json.RawMessage `json:"tool_resources"`
}

func decodeThreadBody(body []byte) (*threadBody, error) {
	var b threadBody
	if len(body) == 0 {
		return &b, nil
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, upstreams.InvalidRequest("", "The request body is not a valid thread: %s.", schemas.DescribeJSONError(err))
	}
	return &b, nil
}

// orEmpty stores an absent or null object as {}, as the public API shows it.
func orEmpty(v json.RawMessage) json.RawMessage {
	if len(v) == 0 || string(v) == "null" {
		return json.RawMessage("{}")
	}
	return v
}

// contentParts normalises message content to the public part array: a
// string becomes one text part.
func contentParts(content json.RawMessage) (json.RawMessage, error) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return json.Marshal([]map[string]any{{"type": "text", "text": map[string]any{"value": s, "annotations": []any{}}}})
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(content, &parts); err != nil {
		return nil, err
	}
	return content, nil
}

func (l *Local) createThread(w http.ResponseWriter, c *upstreams.Call) error {
	b, err := decodeThreadBody(c.Body)
	if err != nil {
		return err
	}
	if err := l.checkThreadReferences(c.Request.Context(), c.Principal.Owner, b); err != nil {
		return err
	}
	t := &store.Thread{ID: store.NewID("thread_"), Owner: c.Principal.Owner, CreatedAt: store.Now(),
		Metadata: orEmpty(b.Metadata), ToolResources: orEmpty(b.ToolResources)}
	msgs := make([]store.ThreadMessage, 0, len(b.Messages))
	for i, m := range b.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return upstreams.InvalidRequest("messages["+itoa(i)+"].role", "role must be user or assistant.")
		}
		content, err := contentParts(m.Content)
		if err != nil {
			return upstreams.InvalidRequest("messages["+itoa(i)+"].content", "content must be a string or an array of content parts.")
		}
		attachments := m.Attachments
		if len(attachments) == 0 || string(attachments) == "null" {
			attachments = json.RawMessage("[]")
		}
		msgs = append(msgs, store.ThreadMessage{ID: store.NewID("msg_"), Role: m.Role, Content: content,
			Attachments: attachments, Metadata: orEmpty(m.Metadata), CreatedAt: t.CreatedAt})
	}
	if err := l.store.CreateThread(c.Request.Context(), t, msgs); err != nil {
		return err
	}
	upstreams.WriteJSON(w, http.StatusOK, toThreadObject(t))
	return nil
}

func (l *Local) retrieveThread(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["thread_id"]
	t, err := l.store.GetThread(c.Request.Context(), c.Principal.Owner, id)
	if err != nil {
		return notFoundOr(err, "thread", id)
	}
	upstreams.WriteJSON(w, http.StatusOK, toThreadObject(t))
	return nil
}

func (l *Local) updateThread(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["thread_id"]
	b, err := decodeThreadBody(c.Body)
	if err != nil {
		return err
	}
	if err := l.checkThreadReferences(c.Request.Context(), c.Principal.Owner, b); err != nil {
		return err
	}
	var meta, tools json.RawMessage
	if b.Metadata != nil {
		meta = orEmpty(b.Metadata)
	}
	if b.ToolResources != nil {
		tools = orEmpty(b.ToolResources)
	}
	t, err := l.store.UpdateThread(c.Request.Context(), c.Principal.Owner, id, meta, tools)
	if err != nil {
		return notFoundOr(err, "thread", id)
	}
	upstreams.WriteJSON(w, http.StatusOK, toThreadObject(t))
	return nil
}

func (l *Local) deleteThread(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["thread_id"]
	if err := l.store.DeleteThread(c.Request.Context(), c.Principal.Owner, id); err != nil {
		return notFoundOr(err, "thread", id)
	}
	upstreams.WriteJSON(w, http.StatusOK, map[string]any{"id": id, "object": "thread.deleted", "deleted": true})
	return nil
}

// itoa formats an index for error params.
func itoa(i int) string { return strconv.Itoa(i) }
