package reference

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
)

// toolsToCall decides which tools the reply calls, per tool_choice.
func toolsToCall(req *request) ([]*tool, *upstreams.Error) {
	if len(req.Tools) == 0 {
		return nil, nil
	}
	mode := "auto"
	var forced string
	switch choice := req.ToolChoice.(type) {
	case string:
		mode = choice
	case map[string]any:
		fn, _ := choice["function"].(map[string]any)
		if name, _ := fn["name"].(string); name != "" {
			mode, forced = "function", name
		} // allowed_tools and custom choices: treat as auto.
	}
	last := req.Messages[len(req.Messages)-1]
	if mode == "none" || (mode == "auto" && last.Role == "tool") {
		return nil, nil
	}
	if mode == "function" {
		for i := range req.Tools {
			if req.Tools[i].Function.Name == forced {
				return []*tool{&req.Tools[i]}, nil
			}
		}
		return nil, upstreams.InvalidRequest("tool_choice", "tool_choice names the function %q, which is not in tools", forced)
	}
	asked := strings.ToLower(lastUserText(req))
	var named []*tool
	for i := range req.Tools {
		if name := req.Tools[i].Function.Name; name != "" && strings.Contains(asked, strings.ToLower(name)) {
			named = append(named, &req.Tools[i])
		}
	}
	if len(named) == 0 && (mode == "required" || strings.Contains(asked, "use a tool") || strings.Contains(asked, "call a tool")) {
		named = []*tool{&req.Tools[0]}
	}
	if len(named) > 1 && req.ParallelToolCalls != nil && !*req.ParallelToolCalls {
		named = named[:1]
	}
	return named, nil
}

// toolChoice is a choice that calls tools with generated arguments.
func toolChoice(req *request, calls []*tool, rnd *rng, choice int) choiceOut {
	c := choiceOut{finishReason: "tool_calls"}
	words := wordsFor(req, rnd, 8)
	for i, t := range calls {
		params := t.Function.Parameters
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		g := req.generator(fmt.Sprintf("tools[%d].function.parameters", toolIndex(req, t)), params, rnd, words)
		args, _ := json.Marshal(g.value(params))
		c.toolCalls = append(c.toolCalls, toolCallOut{
			id:        fmt.Sprintf("call_%016x%02d%02d", rnd.next(), choice, i),
			name:      t.Function.Name,
			arguments: string(args),
		})
	}
	return c
}

// toolIndex is t's position in the request's tools, for naming its
// parameters in an error.
func toolIndex(req *request, t *tool) int {
	for i := range req.Tools {
		if &req.Tools[i] == t {
			return i
		}
	}
	return 0
}
