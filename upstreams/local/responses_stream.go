package local

import (
	"encoding/json"
	"net/http"
	"strings"
)

// streamResponse sends a made response as the public event sequence:
// response.created and response.in_progress, then for each output item
// output_item.added, its text (content_part.added, output_text.delta...,
// output_text.done, content_part.done) or its arguments
// (function_call_arguments.delta..., .done), output_item.done, and last
// response.completed (response.incomplete when cut by max_output_tokens)
// with the usage. sequence_number counts from 0 without a gap.
func streamResponse(w http.ResponseWriter, r *responseObject) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &eventWriter{w: w, rc: http.NewResponseController(w)}

	pending := *r
	pending.Status, pending.CompletedAt, pending.IncompleteDetails, pending.Usage = "in_progress", nil, nil, nil
	pending.Output = []json.RawMessage{}
	s.send("response.created", map[string]any{"response": pending})
	s.send("response.in_progress", map[string]any{"response": pending})
	for i, raw := range r.Output {
		var item map[string]any
		if err := json.Unmarshal(raw, &item); err != nil {
			return err
		}
		id := item["id"]
		added := map[string]any{}
		for k, v := range item {
			added[k] = v
		}
		added["status"] = "in_progress"
		switch item["type"] {
		case "message":
			added["content"] = []any{}
			s.send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			part := item["content"].([]any)[0].(map[string]any)
			text, _ := part["text"].(string)
			at := map[string]any{"item_id": id, "output_index": i, "content_index": 0}
			s.send("response.content_part.added", with(at, "part", map[string]any{"type": "output_text", "text": "", "annotations": []any{}, "logprobs": []any{}}))
			for _, piece := range textPieces(text) {
				s.send("response.output_text.delta", with(with(at, "delta", piece), "logprobs", []any{}))
			}
			s.send("response.output_text.done", with(with(at, "text", text), "logprobs", []any{}))
			s.send("response.content_part.done", with(at, "part", part))
		case "function_call":
			added["arguments"] = ""
			s.send("response.output_item.added", map[string]any{"output_index": i, "item": added})
			args, _ := item["arguments"].(string)
			at := map[string]any{"item_id": id, "output_index": i}
			for _, piece := range textPieces(args) {
				s.send("response.function_call_arguments.delta", with(at, "delta", piece))
			}
			s.send("response.function_call_arguments.done", with(with(at, "arguments", args), "name", item["name"]))
		}
		s.send("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	final := "response.completed"
	if r.Status == "incomplete" {
		final = "response.incomplete"
	}
	s.send(final, map[string]any{"response": r})
	return nil
}

// with is a copy of m with one more field.
func with(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}

// textPieces cuts text into the deltas of a stream: a word with the
// spaces before it each.
func textPieces(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexFunc(strings.TrimLeft(text, " "), func(r rune) bool { return r == ' ' })
		if i < 0 {
			return append(out, text)
		}
		cut := i + len(text) - len(strings.TrimLeft(text, " "))
		out = append(out, text[:cut])
		text = text[cut:]
	}
	return out
}

// eventWriter writes server-sent events numbered by sequence_number; after
// a failed write (the client left) it writes nothing more.
type eventWriter struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	seq    int
	broken bool
}

func (s *eventWriter) send(typ string, fields map[string]any) {
	if s.broken {
		return
	}
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	b, err := json.Marshal(fields)
	if err == nil {
		_, err = s.w.Write([]byte("event: " + typ + "\ndata: " + string(b) + "\n\n"))
	}
	if err != nil {
		s.broken = true
		return
	}
	_ = s.rc.Flush()
}
