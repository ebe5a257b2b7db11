package modelgate

import (
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// responsePromptTokens is the prompt of a responses.create request,
// counted as chat counts its messages: the instructions and the input (a
// string or items: message content, function call arguments and outputs)
// as messages. The conversation a previous_response_id brings is not known
// here; the reply's usage settles it.
func responsePromptTokens(model string, doc map[string]any) int64 {
	var msgs []any
	if s, ok := doc["instructions"].(string); ok && s != "" {
		msgs = append(msgs, map[string]any{"role": "developer", "content": s})
	}
	switch in := doc["input"].(type) {
	case string:
		msgs = append(msgs, map[string]any{"role": "user", "content": in})
	case []any:
		for _, raw := range in {
			item, _ := raw.(map[string]any)
			msg := map[string]any{"role": item["role"], "content": item["content"]}
			switch item["type"] {
			case "function_call":
				msg = map[string]any{"role": "assistant", "content": item["arguments"], "name": item["name"]}
			case "function_call_output":
				msg = map[string]any{"role": "tool", "content": item["output"]}
			}
			msgs = append(msgs, msg)
		}
	}
	return int64(tokens.CountChat(model, map[string]any{"messages": msgs, "tools": doc["tools"]}))
}
