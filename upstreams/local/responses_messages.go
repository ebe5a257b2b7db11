package local

import (
	"encoding/json"
	"fmt"
)

// chatMessages writes the messages of the chat a response is made by as
// the JSON array json.Marshal would give for them, one message at a time:
// a plain message (one string) is written as it is, without the map the
// general way builds for each, which for 199,000 one-letter items held
// some 70 MB at once. The last message written the general way is kept as
// a map until the next, as a function call joins the assistant's calls
// before it.
type chatMessages struct {
	buf  []byte
	n    int
	last map[string]any
}

// grow makes room for the plain messages among items at once (their
// text, its quotes and escapes aside), rather than by doubling.
func (m *chatMessages) grow(items []inputItem) {
	n := 0
	for _, it := range items {
		if it.plain {
			n += len(it.text) + len(it.role) + len(`{"content":"","role":""},`)
		}
	}
	m.buf = make([]byte, 0, n+1)
}

// plain adds a message of one string.
func (m *chatMessages) plain(role, text string) error {
	if err := m.flush(); err != nil {
		return err
	}
	quoted, err := json.Marshal(text)
	if err != nil {
		return fmt.Errorf("encoding chat message: %w", err)
	}
	m.open()
	m.buf = append(m.buf, `{"content":`...)
	m.buf = append(m.buf, quoted...)
	m.buf = append(m.buf, `,"role":"`...)
	m.buf = append(m.buf, role...)
	m.buf = append(m.buf, `"}`...)
	return nil
}

// add adds a message built the general way.
func (m *chatMessages) add(msg map[string]any) error {
	if err := m.flush(); err != nil {
		return err
	}
	m.last = msg
	return nil
}

// item adds a stored item: a message, a function call (joining the
// assistant's calls before it) or its output; other items have no place
// in a chat.
func (m *chatMessages) item(raw json.RawMessage) error {
	var f itemFields
	if err := json.Unmarshal(raw, &f); err != nil {
		return fmt.Errorf("reading conversation item: %w", err)
	}
	switch f.Type {
	case "message":
		return m.add(map[string]any{"role": f.Role, "content": chatContent(f.Role, f.Content)})
	case "function_call":
		call := map[string]any{"id": f.CallID, "type": "function", "function": map[string]any{"name": f.Name, "arguments": f.Arguments}}
		if m.last != nil && m.last["role"] == "assistant" && m.last["tool_calls"] != nil {
			m.last["tool_calls"] = append(m.last["tool_calls"].([]any), call)
			return nil
		}
		return m.add(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}})
	case "function_call_output":
		return m.add(map[string]any{"role": "tool", "tool_call_id": f.CallID, "content": outputText(f.Output)})
	}
	return nil
}

// array is the messages as a JSON array, nil when there are none.
func (m *chatMessages) array() (json.RawMessage, error) {
	if err := m.flush(); err != nil || m.n == 0 {
		return nil, err
	}
	return append(m.buf, ']'), nil
}

// open starts the next message of the array.
func (m *chatMessages) open() {
	if m.n == 0 {
		m.buf = append(m.buf, '[')
	} else {
		m.buf = append(m.buf, ',')
	}
	m.n++
}

// flush writes the message kept as a map.
func (m *chatMessages) flush() error {
	if m.last == nil {
		return nil
	}
	b, err := json.Marshal(m.last)
	if err != nil {
		return fmt.Errorf("encoding chat message: %w", err)
	}
	m.last = nil
	m.open()
	m.buf = append(m.buf, b...)
	return nil
}
