package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"
)

// Differential mode: the same deterministic requests sent to two targets
// (a provider directly, and through a gateway), every difference the
// second introduces in status, content type and body, in shape and in
// value. Values that are each target's own are compared by shape only,
// by this rule: members named id or ending in _id (custom_id excepted:
// the client chose it), created, and members ending in _at (Unix times).

// Difference is one way the second target's reply departs from the
// first's.
type Difference struct {
	Step    string `json:"step"`
	Request string `json:"request"`
	// Path is status, content-type, or body (event n of a stream) and
	// the member: body.choices[0].message.content.
	Path    string `json:"path"`
	Base    string `json:"base"`
	Against string `json:"against"`
}

// DiffReport is the outcome of a differential run.
type DiffReport struct {
	Base        string       `json:"base"`
	Against     string       `json:"against"`
	Steps       int          `json:"steps"`
	Differences []Difference `json:"differences"`
}

// diffStep is one request of the differential script; {name} in its path
// is the id an earlier step saved as name, on the same target.
type diffStep struct {
	name string
	req  func(cfg *Config) request
	save string
}

func jsonStep(name, method, path string, body any, beta bool, save string) diffStep {
	return diffStep{name: name, save: save, req: func(*Config) request {
		return request{method: method, path: path, json: body, beta: beta}
	}}
}

func chatStep(name string, fields ...any) diffStep {
	return diffStep{name: name, req: func(cfg *Config) request {
		body := map[string]any{"model": cfg.Model, "messages": []any{map[string]any{"role": "user", "content": "Describe a river and call a tool if asked."}}, "seed": 7}
		for i := 0; i+1 < len(fields); i += 2 {
			body[fields[i].(string)] = fields[i+1]
		}
		return request{method: http.MethodPost, path: "/v1/chat/completions", json: body, stream: body["stream"] == true}
	}}
}

// diffScript is what a differential run sends to each target, in order.
var diffScript = []diffStep{
	jsonStep("models.list", http.MethodGet, "/v1/models", nil, false, ""),
	chatStep("chat.completions.create", "max_completion_tokens", 40),
	chatStep("chat.completions.create stream", "stream", true, "stream_options", map[string]any{"include_usage": true}, "logprobs", true, "top_logprobs", 2),
	chatStep("chat.completions.create tools", "tools", []any{weatherTool, timeTool}, "tool_choice", forceTool("get_time")),
	chatStep("chat.completions.create invalid", "messages", nil),
	jsonStep("embeddings.create", http.MethodPost, embeddingsPath, map[string]any{"model": embeddingModel, "input": []any{"alpha", "beta"}, "dimensions": 8}, false, ""),
	{name: "responses.create", req: func(cfg *Config) request {
		return request{method: http.MethodPost, path: responsesPath, json: map[string]any{"model": cfg.Model, "input": "Describe a river.", "instructions": "Be brief.", "store": false}}
	}},
	{name: "files.create", save: "file", req: func(*Config) request {
		body, ct := multipartBody("diff - ü.txt", "assistants", []byte("the same bytes on both sides\n"), nil)
		return request{method: http.MethodPost, path: "/v1/files", raw: body, contentType: ct}
	}},
	jsonStep("files.retrieve", http.MethodGet, "/v1/files/{file}", nil, false, ""),
	jsonStep("files.content", http.MethodGet, "/v1/files/{file}/content", nil, false, ""),
	jsonStep("files.delete", http.MethodDelete, "/v1/files/{file}", nil, false, ""),
	jsonStep("files.retrieve unknown", http.MethodGet, "/v1/files/file-diff-unknown", nil, false, ""),
	jsonStep("vector_stores.create", http.MethodPost, "/v1/vector_stores", map[string]any{"name": "diff", "metadata": map[string]any{"k": "v"}}, true, "vs"),
	jsonStep("vector_stores.retrieve", http.MethodGet, "/v1/vector_stores/{vs}", nil, true, ""),
	jsonStep("vector_stores.delete", http.MethodDelete, "/v1/vector_stores/{vs}", nil, true, ""),
	jsonStep("threads.create", http.MethodPost, "/v1/threads", map[string]any{"metadata": map[string]any{"k": "v"}}, true, "thread"),
	jsonStep("threads.delete", http.MethodDelete, "/v1/threads/{thread}", nil, true, ""),
}

// Diff sends the script to base and to against (each with its own
// configuration: URL and key) and reports every difference.
func Diff(ctx context.Context, base, against Config) (*DiffReport, error) {
	var runs [2][]*exchange
	for i, cfg := range []*Config{&base, &against} {
		cfg.setDefaults()
		if cfg.BaseURL == "" || cfg.APIKey == "" {
			return nil, fmt.Errorf("diff: a base URL and an API key are required for both targets")
		}
		t := &T{ctx: ctx, cfg: cfg, res: &Result{}}
		ids := map[string]string{}
		for _, s := range diffScript {
			r := s.req(cfg)
			for name, id := range ids {
				r.path = strings.ReplaceAll(r.path, "{"+name+"}", id)
			}
			ex := &exchange{req: &r}
			if err := t.send(ex); err != nil {
				return nil, fmt.Errorf("diff: %s to %s: %w", s.name, cfg.BaseURL, err)
			}
			if s.save != "" {
				var obj struct {
					ID string `json:"id"`
				}
				json.Unmarshal(ex.body, &obj)
				ids[s.save] = obj.ID
			}
			runs[i] = append(runs[i], ex)
		}
	}
	rep := &DiffReport{Base: base.BaseURL, Against: against.BaseURL, Steps: len(diffScript), Differences: []Difference{}}
	for i, s := range diffScript {
		a, b := runs[0][i], runs[1][i]
		add := func(path, x, y string) {
			rep.Differences = append(rep.Differences, Difference{Step: s.name, Request: a.requestLine(excerpt), Path: path, Base: x, Against: y})
		}
		if a.status != b.status {
			add("status", fmt.Sprint(a.status), fmt.Sprint(b.status))
		}
		ta, _, _ := mime.ParseMediaType(a.header.Get("Content-Type"))
		tb, _, _ := mime.ParseMediaType(b.header.Get("Content-Type"))
		if ta != tb {
			add("content-type", ta, tb)
		}
		bodies := func(ex *exchange) [][]byte {
			if strings.HasPrefix(ta, "text/event-stream") {
				return streamData(ex.body)
			}
			return [][]byte{ex.body}
		}
		da, db := bodies(a), bodies(b)
		if len(da) != len(db) {
			add("body", fmt.Sprintf("%d events", len(da)), fmt.Sprintf("%d events", len(db)))
		}
		for j := range min(len(da), len(db)) {
			path := "body"
			if len(da) > 1 || strings.HasPrefix(ta, "text/event-stream") {
				path = fmt.Sprintf("event %d", j+1)
			}
			diffBodies(path, da[j], db[j], add)
		}
	}
	return rep, nil
}

// diffBodies compares two bodies as JSON documents, or byte for byte
// when either is not JSON.
func diffBodies(path string, a, b []byte, add func(path, base, against string)) {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		if !bytes.Equal(a, b) {
			add(path, excerpt(a), excerpt(b))
		}
		return
	}
	diffValues(path, "", x, y, add)
}

// ownValue says a member's value is each target's own: compared by shape
// only.
func ownValue(key string) bool {
	return key != "custom_id" && (idField(key) || key == "created" || strings.HasSuffix(key, "_at"))
}

// diffValues compares two decoded documents member by member; key is the
// member's name (for ownValue).
func diffValues(path, key string, a, b any, add func(path, base, against string)) {
	kinds := map[string]string{}
	shape(a, "", kinds)
	ka := kinds[""]
	clear(kinds)
	shape(b, "", kinds)
	kb := kinds[""]
	switch {
	case ka != kb:
		add(path, ka+" "+jsonText(a), kb+" "+jsonText(b))
	case ownValue(key):
	case ka == "object":
		ma, mb := a.(map[string]any), b.(map[string]any)
		union := maps.Clone(ma)
		maps.Copy(union, mb)
		keys := slices.Sorted(maps.Keys(union))
		for _, k := range keys {
			va, inA := ma[k]
			vb, inB := mb[k]
			switch {
			case !inA:
				add(path+"."+k, "missing", jsonText(vb))
			case !inB:
				add(path+"."+k, jsonText(va), "missing")
			default:
				diffValues(path+"."+k, k, va, vb, add)
			}
		}
	case ka == "array":
		la, lb := a.([]any), b.([]any)
		if len(la) != len(lb) {
			add(path, fmt.Sprintf("%d items", len(la)), fmt.Sprintf("%d items", len(lb)))
		}
		for i := range min(len(la), len(lb)) {
			diffValues(fmt.Sprintf("%s[%d]", path, i), key, la[i], lb[i], add)
		}
	case !sameJSON(a, b):
		add(path, jsonText(a), jsonText(b))
	}
}

// WriteText writes the differential report for people.
func (r *DiffReport) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "diff of %s against %s: %d requests, %d differences (ids, created and *_at compared by shape only)\n", r.Against, r.Base, r.Steps, len(r.Differences))
	for _, d := range r.Differences {
		fmt.Fprintf(&b, "\n%s: %s\n  request: %s\n  base:    %s\n  against: %s\n", d.Step, d.Path, d.Request, d.Base, d.Against)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the differential report as one JSON document.
func (r *DiffReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
