package local

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// inputItem is one input item of a response, normalised to its public
// stored shape (raw; for a plain message made when stored, see stored)
// with its ID; an item reference is only its ID until resolved (ref is
// its param then).
type inputItem struct {
	id  string
	raw json.RawMessage
	ref string
	// plain: a message of one string, its role and text (plainItem),
	// which the chat takes as they are.
	plain      bool
	role, text string
}

// stored is the item's stored bytes.
func (it *inputItem) stored() json.RawMessage {
	if it.plain {
		return plainStored(it.role, it.text, it.id)
	}
	return it.raw
}

// itemFields are the fields of an input item the conversion reads.
type itemFields struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// inputItems reads `input`: a string (one user message) or an array of
// input items: messages, function calls and their outputs, item
// references and the other items of the public API (see asIsItem).
// decoded is the same input as the gateway decoded it (nil when it did
// not), read instead where its items are all plain messages.
func inputItems(raw json.RawMessage, decoded any) ([]inputItem, error) {
	ids := store.NewIDSequence()
	if items, ok := plainItems(decoded, ids); ok {
		return items, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		it, err := messageItem(itemFields{Role: "user", Content: raw}, "input", ids)
		if err != nil {
			return nil, err
		}
		return []inputItem{it}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, upstreams.InvalidRequest("input", "input must be a string or an array of input items.")
	}
	out := make([]inputItem, 0, len(list))
	for i, r := range list {
		param := "input[" + itoa(i) + "]"
		var f itemFields
		if err := json.Unmarshal(r, &f); err != nil {
			return nil, upstreams.InvalidRequest(param, "%s must be an input item object.", param)
		}
		var it inputItem
		var err error
		switch {
		case isReference(f):
			if f.ID == "" {
				return nil, upstreams.InvalidRequest(param+".id", "An item_reference item needs id.")
			}
			it = inputItem{id: f.ID, ref: param}
		case f.Type == "" || f.Type == "message":
			it, err = messageItem(f, param, ids)
		case f.Type == "function_call":
			if f.CallID == "" || f.Name == "" {
				return nil, upstreams.InvalidRequest(param+".call_id", "A function_call item needs call_id and name.")
			}
			it, err = storedItem(orID(ids, f.ID, "fc_"), map[string]any{"type": "function_call", "call_id": f.CallID, "name": f.Name,
				"arguments": f.Arguments, "status": "completed"})
		case f.Type == "function_call_output":
			if f.CallID == "" {
				return nil, upstreams.InvalidRequest(param+".call_id", "A function_call_output item needs call_id.")
			}
			// output is a string, or content parts kept as sent.
			var out any
			var text string
			if json.Unmarshal(f.Output, &text) == nil {
				out = text
			} else if out, err = messageParts(f.Output, "", param+".output"); err != nil {
				return nil, err
			}
			it, err = storedItem(orID(ids, f.ID, "fco_"), map[string]any{"type": "function_call_output", "call_id": f.CallID, "output": out, "status": "completed"})
		default:
			it, err = asIsItem(r, f, param, ids)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}

// orID is id, or where it is empty the next ID of ids with prefix: the
// IDs minted for one request's items sort in their order, and take one
// place of the index on stored items' IDs (see store.IDSequence).
func orID(ids *store.IDSequence, id, prefix string) string {
	if id != "" {
		return id
	}
	return ids.Next(prefix)
}

// messageItem normalises a message: its content becomes an array of
// parts (see messageParts).
func messageItem(f itemFields, param string, ids *store.IDSequence) (inputItem, error) {
	switch f.Role {
	case "user", "system", "developer", "assistant":
	default:
		return inputItem{}, upstreams.InvalidRequest(param+".role", "role must be one of user, system, developer or assistant.")
	}
	parts, err := messageParts(f.Content, f.Role, param+".content")
	if err != nil {
		return inputItem{}, err
	}
	return storedItem(orID(ids, f.ID, "msg_"), map[string]any{"type": "message", "role": f.Role, "content": parts, "status": "completed"})
}

// partsText is a string, or the text of an array of text parts.
func partsText(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Text == nil {
			return "", false
		}
		b.WriteString(*p.Text)
	}
	return b.String(), true
}

func storedItem(id string, fields map[string]any) (inputItem, error) {
	fields["id"] = id
	raw, err := json.Marshal(fields)
	if err != nil {
		return inputItem{}, fmt.Errorf("encoding input item: %w", err)
	}
	return inputItem{id: id, raw: raw}, nil
}

// chatRequest is the chat completion that makes a response: the
// instructions, the conversation so far and the input as messages, the
// function tools, tool_choice, text format, caps and sampling translated,
// streamed with its usage when the response is.
func chatRequest(req *responseRequest, history []json.RawMessage, items []inputItem) ([]byte, error) {
	var msgs chatMessages
	msgs.grow(items)
	if req.Instructions != nil && *req.Instructions != "" {
		if err := msgs.plain("developer", *req.Instructions); err != nil {
			return nil, err
		}
	}
	for _, raw := range history {
		if err := msgs.item(raw); err != nil {
			return nil, err
		}
	}
	for _, it := range items {
		var err error
		if it.plain {
			err = msgs.plain(it.role, it.text)
		} else {
			err = msgs.item(it.raw)
		}
		if err != nil {
			return nil, err
		}
	}
	array, err := msgs.array()
	if err != nil {
		return nil, err
	}
	if array == nil {
		return nil, upstreams.InvalidRequest("input", "input must hold at least one message.")
	}
	body := map[string]any{"model": req.Model, "messages": array}
	if err := chatTools(req, body); err != nil {
		return nil, err
	}
	if err := chatFormat(req.Text, body); err != nil {
		return nil, err
	}
	if req.Stream {
		// The response's events are sent as the chat's chunks arrive; its
		// usage is the stream's last chunk.
		body["stream"] = true
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	if req.ParallelToolCalls != nil {
		body["parallel_tool_calls"] = *req.ParallelToolCalls
	}
	if req.MaxOutputTokens != nil {
		body["max_completion_tokens"] = *req.MaxOutputTokens
	}
	if req.Temperature != nil {
		body["temperature"] = *req.Temperature
	}
	if req.TopP != nil {
		body["top_p"] = *req.TopP
	}
	if req.Reasoning != nil && req.Reasoning.Effort != nil {
		body["reasoning_effort"] = *req.Reasoning.Effort
	}
	return json.Marshal(body)
}

// chatTools translates function tools and tool_choice.
func chatTools(req *responseRequest, body map[string]any) error {
	if len(req.Tools) > 0 && string(req.Tools) != "null" {
		var tools []map[string]any
		if err := json.Unmarshal(req.Tools, &tools); err != nil {
			return upstreams.InvalidRequest("tools", "tools must be an array of tools.")
		}
		out := make([]any, 0, len(tools))
		for i, t := range tools {
			if t["type"] != "function" {
				return upstreams.InvalidRequest("tools["+itoa(i)+"].type", "The local upstream serves function tools only, not '%v'.", t["type"])
			}
			fn := map[string]any{}
			for _, k := range []string{"name", "description", "parameters", "strict"} {
				if v, ok := t[k]; ok && v != nil {
					fn[k] = v
				}
			}
			out = append(out, map[string]any{"type": "function", "function": fn})
		}
		if len(out) > 0 {
			body["tools"] = out
		}
	}
	if len(req.ToolChoice) == 0 || string(req.ToolChoice) == "null" {
		return nil
	}
	var mode string
	if json.Unmarshal(req.ToolChoice, &mode) == nil {
		body["tool_choice"] = mode
		return nil
	}
	var named struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if json.Unmarshal(req.ToolChoice, &named) != nil || named.Type != "function" || named.Name == "" {
		return upstreams.InvalidRequest("tool_choice", "The local upstream takes tool_choice as none, auto, required or a function by name.")
	}
	body["tool_choice"] = map[string]any{"type": "function", "function": map[string]any{"name": named.Name}}
	return nil
}

// chatFormat translates text.format to response_format.
func chatFormat(text json.RawMessage, body map[string]any) error {
	if len(text) == 0 || string(text) == "null" {
		return nil
	}
	var t struct {
		Format map[string]any `json:"format"`
	}
	if err := json.Unmarshal(text, &t); err != nil {
		return upstreams.InvalidRequest("text", "text must be an object.")
	}
	switch t.Format["type"] {
	case nil, "text":
	case "json_object":
		body["response_format"] = map[string]any{"type": "json_object"}
	case "json_schema":
		js := map[string]any{}
		for _, k := range []string{"name", "description", "schema", "strict"} {
			if v, ok := t.Format[k]; ok && v != nil {
				js[k] = v
			}
		}
		body["response_format"] = map[string]any{"type": "json_schema", "json_schema": js}
	default:
		return upstreams.InvalidRequest("text.format.type", "text.format.type must be text, json_object or json_schema.")
	}
	return nil
}

// chatCompletion is what a response is made of in a chat completion.
type chatCompletion struct {
	Choices []struct {
		FinishReason string `json:"finish_reason"`
		Message      struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       string       `json:"id"`
				Function chatFunction `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
	Usage chatUsage `json:"usage"`
}

type chatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// responseUsage is the Responses form of a chat's usage, with every
// detail the public API's ResponseUsage requires (cache_write_tokens
// among them) carried over, zero where the chat reported none.
func (u chatUsage) responseUsage() *responseUsage {
	return &responseUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens,
		TotalTokens: upstreams.SumTokens(u.PromptTokens, u.CompletionTokens),
		InputTokensDetails: map[string]int{"cached_tokens": u.PromptTokensDetails.CachedTokens,
			"cache_write_tokens": u.PromptTokensDetails.CacheWriteTokens},
		OutputTokensDetails: map[string]int{"reasoning_tokens": u.CompletionTokensDetails.ReasoningTokens}}
}

// readCompletion reads a chat completion reply.
func readCompletion(chatReply []byte) (*chatCompletion, error) {
	var cc chatCompletion
	if err := json.Unmarshal(chatReply, &cc); err != nil || len(cc.Choices) == 0 {
		return nil, &upstreams.Error{Status: 502, Type: upstreams.TypeServer, Message: "The chat completions route answered with no choice to make a response of."}
	}
	return &cc, nil
}

// buildResponse turns the chat completion into the response object, as
// the response a stream of it makes (see responseMaker).
func buildResponse(req *responseRequest, chatReply []byte) (*responseObject, error) {
	cc, err := readCompletion(chatReply)
	if err != nil {
		return nil, err
	}
	m := newResponseMaker(req, nil)
	m.completion(cc)
	return m.complete(), nil
}

// newResponse is the response to req as it starts: in progress, with no
// output yet.
func newResponse(req *responseRequest) *responseObject {
	r := &responseObject{
		ID: store.NewID("resp_"), Object: "response", CreatedAt: store.Now(), Status: "in_progress",
		Instructions: req.Instructions, MaxOutputTokens: req.MaxOutputTokens, Model: req.Model, Output: []json.RawMessage{},
		ParallelToolCalls: req.ParallelToolCalls == nil || *req.ParallelToolCalls,
		Reasoning:         map[string]any{"effort": nil, "summary": nil},
		Store:             req.Store == nil || *req.Store,
		Temperature:       1, TopP: 1, Truncation: "disabled", User: req.User,
		Text: json.RawMessage(`{"format":{"type":"text"}}`), ToolChoice: json.RawMessage(`"auto"`), Tools: json.RawMessage(`[]`),
		Metadata: orEmpty(req.Metadata),
	}
	if req.conversationID != "" {
		r.Conversation = &conversationRef{ID: req.conversationID}
	}
	if req.PreviousResponseID != "" {
		r.PreviousResponseID = &req.PreviousResponseID
	}
	if req.Reasoning != nil && req.Reasoning.Effort != nil {
		r.Reasoning["effort"] = *req.Reasoning.Effort
	}
	if req.Temperature != nil {
		r.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		r.TopP = *req.TopP
	}
	for _, v := range []struct {
		from json.RawMessage
		to   *json.RawMessage
	}{{req.Text, &r.Text}, {req.ToolChoice, &r.ToolChoice}, {echoedTools(req.Tools), &r.Tools}} {
		if len(v.from) > 0 && string(v.from) != "null" {
			*v.to = v.from
		}
	}
	return r
}

// echoedTools is tools as a response repeats them: a function tool's
// parameters and strict are required members of the response's tool
// (null where the request left them out).
func echoedTools(tools json.RawMessage) json.RawMessage {
	var list []map[string]any
	if len(tools) == 0 || json.Unmarshal(tools, &list) != nil {
		return tools // checked when the request is made into a chat
	}
	filled := false
	for _, t := range list {
		if t["type"] != "function" {
			continue
		}
		for _, k := range []string{"parameters", "strict"} {
			if _, ok := t[k]; !ok {
				t[k], filled = nil, true
			}
		}
	}
	if !filled {
		return tools
	}
	out, err := json.Marshal(list)
	if err != nil {
		return tools
	}
	return out
}
