package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// The input items of a response beyond messages and function calls: item
// references, resolved from the owner's stored responses and
// conversations, and the other items of the public API's InputItem
// (output items a client passes back, reasoning, calls of tools the
// engine has not got), kept as given and left out of the chat, which has
// no place for them. Message content parts
// are the public API's: text, refusal, image (by URL, data URL or file ID)
// and file (by ID, data or URL); the chat gets them as its own parts.

// asIsItemTypes are the types of the public API's InputItem (the Item
// variants of spec/openai-openapi.yaml) that are stored as given.
var asIsItemTypes = []string{
	"reasoning", "file_search_call", "computer_call", "computer_call_output", "web_search_call",
	"tool_search_call", "tool_search_output", "additional_tools", "compaction", "compaction_trigger",
	"image_generation_call", "code_interpreter_call", "local_shell_call", "local_shell_call_output",
	"shell_call", "shell_call_output", "apply_patch_call", "apply_patch_call_output",
	"mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "mcp_call",
	"custom_tool_call", "custom_tool_call_output", "program", "program_output",
}

// asIsItem keeps an item of another type as the client sent it, with an
// ID minted where it has none.
func asIsItem(raw json.RawMessage, f itemFields, param string, ids *store.IDSequence) (inputItem, error) {
	if !slices.Contains(asIsItemTypes, f.Type) {
		return inputItem{}, upstreams.InvalidRequest(param+".type", "Invalid value: '%s'. %s.type is not a type of input item.", f.Type, param)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		return inputItem{}, upstreams.InvalidRequest(param, "%s must be an input item object.", param)
	}
	return storedItem(orID(ids, f.ID, "item_"), fields)
}

// isReference tells an item reference: its type, or an item with an ID
// and neither type nor role (the type of a reference may be null).
func isReference(f itemFields) bool {
	return f.Type == "item_reference" || f.Type == "" && f.Role == "" && f.ID != ""
}

// resolveReferences replaces each item reference with the item of the
// owner's stored responses or conversations it names. An ID none of them
// holds is 404, as the public API answers. What the references
// bring is bounded by the gateway's body limit, as a conversation is: a
// few references to a large item would otherwise be loaded many times.
func (l *Local) resolveReferences(c *upstreams.Call, items []inputItem, limit int64) error {
	var size int64
	for i := range items {
		if items[i].ref == "" {
			continue
		}
		raw, err := l.store.ResponseItem(c.Request.Context(), c.Principal.Owner, items[i].id)
		if errors.Is(err, store.ErrNotFound) {
			return &upstreams.Error{Status: http.StatusNotFound, Type: upstreams.TypeInvalidRequest, Param: items[i].ref + ".id",
				Message: fmt.Sprintf("Item with id '%s' not found. Items are stored with the response that made or received them, unless it was created with `store` set to false, and with the conversation they were added to, kept when it is deleted.", items[i].id)}
		}
		if err != nil {
			return err
		}
		if size += int64(len(raw)); size > limit {
			return &upstreams.Error{Status: http.StatusBadRequest, Type: upstreams.TypeInvalidRequest, Param: items[i].ref, Code: "context_length_exceeded",
				Message: fmt.Sprintf("The items input references hold more than the %d bytes a request may carry.", limit)}
		}
		items[i] = inputItem{id: items[i].id, raw: raw}
	}
	return nil
}

// messageParts checks a message's content (a string, or an array of
// parts) and returns it as parts: a string becomes one input_text part
// (output_text for the assistant). Parts are kept as given, with the
// defaults the public API fills in.
func messageParts(raw json.RawMessage, role, param string) ([]any, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if role == "assistant" {
			return []any{map[string]any{"type": "output_text", "text": s, "annotations": []any{}, "logprobs": []any{}}}, nil
		}
		return []any{map[string]any{"type": "input_text", "text": s}}, nil
	}
	var parts []map[string]any
	if err := json.Unmarshal(raw, &parts); err != nil || parts == nil {
		return nil, upstreams.InvalidRequest(param, "%s must be a string or an array of content parts.", param)
	}
	out := make([]any, len(parts))
	for j, p := range parts {
		if err := checkPart(p, param+"["+itoa(j)+"]"); err != nil {
			return nil, err
		}
		out[j] = p
	}
	return out, nil
}

// checkPart checks one content part and fills in its defaults.
func checkPart(p map[string]any, param string) error {
	str := func(k string) bool { _, ok := p[k].(string); return ok }
	switch p["type"] {
	case "input_text":
		if !str("text") {
			return upstreams.InvalidRequest(param+".text", "An input_text part needs text.")
		}
	case "output_text":
		if !str("text") {
			return upstreams.InvalidRequest(param+".text", "An output_text part needs text.")
		}
		for _, k := range []string{"annotations", "logprobs"} {
			if p[k] == nil {
				p[k] = []any{} // the public API's OutputTextContent requires both
			}
		}
	case "refusal":
		if !str("refusal") {
			return upstreams.InvalidRequest(param+".refusal", "A refusal part needs refusal.")
		}
	case "input_image":
		if !str("image_url") && !str("file_id") {
			return upstreams.InvalidRequest(param, "An input_image part needs image_url (a URL or a base64 data URL) or file_id.")
		}
		switch p["detail"] {
		case nil:
			p["detail"] = "auto"
		case "auto", "low", "high", "original":
		default:
			return upstreams.InvalidRequest(param+".detail", "detail must be one of auto, low, high or original.")
		}
	case "input_file":
		if !str("file_id") && !str("file_data") && !str("file_url") {
			return upstreams.InvalidRequest(param, "An input_file part needs file_id, file_data or file_url.")
		}
	default:
		return upstreams.InvalidRequest(param+".type", "Invalid value: '%v'. Supported content part types are input_text, output_text, refusal, input_image and input_file.", p["type"])
	}
	return nil
}

// chatContent is a message's content parts as chat message content: the
// joined text where all parts are text, else the chat's own parts. The
// chat has no image by file ID: such an image, as a file, is a file part.
func chatContent(role string, content json.RawMessage) any {
	if text, ok := partsText(content); ok {
		return text
	}
	var parts []map[string]any
	_ = json.Unmarshal(content, &parts) // the stored item's parts, checked when it was made
	out := make([]any, 0, len(parts))
	for _, p := range parts {
		switch p["type"] {
		case "input_text", "output_text":
			out = append(out, map[string]any{"type": "text", "text": p["text"]})
		case "refusal":
			if role == "assistant" {
				out = append(out, map[string]any{"type": "refusal", "refusal": p["refusal"]})
			} else {
				out = append(out, map[string]any{"type": "text", "text": p["refusal"]})
			}
		case "input_image":
			if url, ok := p["image_url"].(string); ok {
				img := map[string]any{"url": url}
				if d := p["detail"]; d == "low" || d == "high" {
					img["detail"] = d
				}
				out = append(out, map[string]any{"type": "image_url", "image_url": img})
			} else {
				out = append(out, map[string]any{"type": "file", "file": map[string]any{"file_id": p["file_id"]}})
			}
		case "input_file":
			file := map[string]any{}
			for _, k := range []string{"file_id", "file_data", "filename", "file_url"} {
				if v, ok := p[k].(string); ok {
					file[k] = v
				}
			}
			out = append(out, map[string]any{"type": "file", "file": file})
		}
	}
	return out
}

// outputText is a function call's output as the chat's tool message
// takes it: a string, or the text of its text parts (the chat's tool
// message holds text only).
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}
