package local

import (
	"encoding/json"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// Messages whose content is one string are most input items, and the
// cheapest to read: from the document the gateway decoded, each becomes
// its stored bytes without a map or a reflective encoding, and the chat
// takes its text as it is. 199,000 of them cost a response seconds of CPU
// and hundreds of megabytes read the general way (plainItems).

// plainMessage is an input item that is a message of one string: a map of
// role and content (strings), at most type "message" and an id besides.
func plainMessage(v any) (role, text, id string, ok bool) {
	m, isMap := v.(map[string]any)
	if !isMap || len(m) > 4 {
		return "", "", "", false
	}
	role, _ = m["role"].(string)
	text, isText := m["content"].(string)
	switch role {
	case "user", "system", "developer", "assistant":
	default:
		return "", "", "", false
	}
	n := 2
	if t, has := m["type"]; has {
		if t != "message" {
			return "", "", "", false
		}
		n++
	}
	if v, has := m["id"]; has {
		if id, ok = v.(string); !ok || id == "" {
			return "", "", "", false
		}
		n++
	}
	return role, text, id, isText && len(m) == n
}

// plainItems reads decoded input items that are all plain messages;
// false when any is not (inputItems then reads them the general way).
func plainItems(decoded any, ids *store.IDSequence) ([]inputItem, bool) {
	list, ok := decoded.([]any)
	if !ok || len(list) == 0 {
		return nil, false
	}
	for _, v := range list {
		if _, _, _, ok := plainMessage(v); !ok {
			return nil, false
		}
	}
	out := make([]inputItem, len(list))
	for i, v := range list {
		role, text, id, _ := plainMessage(v)
		out[i] = plainItem(role, text, orID(ids, id, "msg_"))
	}
	return out, true
}

// plainItem is a message of one string; its stored bytes are made when
// it is stored (see inputItem.stored), not held from the start with the
// chat made of it.
func plainItem(role, text, id string) inputItem {
	return inputItem{id: id, role: role, text: text, plain: true}
}

// plainStored is the stored message of one string: the bytes json.Marshal
// gives the map messageItem makes of it (members in name order).
func plainStored(role, text, id string) json.RawMessage {
	quoted, _ := json.Marshal(text) // a string always encodes
	quotedID, _ := json.Marshal(id)
	b := make([]byte, 0, len(quoted)+len(quotedID)+len(role)+120)
	b = append(b, `{"content":[{`...)
	if role == "assistant" {
		b = append(b, `"annotations":[],"logprobs":[],"text":`...)
		b = append(b, quoted...)
		b = append(b, `,"type":"output_text"}]`...)
	} else {
		b = append(b, `"text":`...)
		b = append(b, quoted...)
		b = append(b, `,"type":"input_text"}]`...)
	}
	b = append(b, `,"id":`...)
	b = append(b, quotedID...)
	b = append(b, `,"role":"`...)
	b = append(b, role...)
	b = append(b, `","status":"completed","type":"message"}`...)
	return b
}
