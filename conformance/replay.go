package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/modelgate/modelgate/internal/sse"
)

// ReplayResult compares one recorded exchange with the reply another
// implementation gives to the same request.
type ReplayResult struct {
	File           string   `json:"file"`
	Line           int      `json:"line"`
	Operation      string   `json:"operation"`
	RecordedStatus int      `json:"recorded_status"`
	Status         int      `json:"status,omitempty"`
	Differences    []string `json:"differences,omitempty"`
	// Skipped says why the request was not sent again.
	Skipped string `json:"skipped,omitempty"`
}

// replayHeaders are not sent again: the key is the replay's own, the
// others belong to the recorded connection.
var replayHeaders = map[string]bool{"Authorization": true, "Content-Length": true, "Connection": true, "Accept-Encoding": true, "Host": true}

// Replay sends the recorded requests again, in order, to cfg's target and
// reports where its replies differ from the recorded ones in status and in
// shape (which fields, of which kinds), not in values: generated text, ids
// and timestamps may differ. IDs the target gives are substituted for the
// recorded ones in later requests; a request whose body was not recorded
// (a large upload), or whose operation is outside cfg.Areas when those
// are given, is skipped, and so is every later one using what it created.
func Replay(ctx context.Context, cfg Config, recs []Record) ([]ReplayResult, error) {
	cfg.setDefaults()
	if cfg.BaseURL == "" || cfg.APIKey == "" {
		return nil, fmt.Errorf("replay: a base URL and an API key are required")
	}
	if err := preflight(ctx, &cfg); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	t := &T{ctx: ctx, cfg: &cfg, res: &Result{}}
	ids := map[string]string{} // recorded id -> replayed id
	tainted := map[string]bool{}
	var out []ReplayResult
	for _, rec := range recs {
		res := ReplayResult{File: rec.File, Line: rec.Line, Operation: rec.Operation, RecordedStatus: rec.Status}
		r, skip := replayRequest(rec, ids, tainted)
		if area := operationArea(rec.Operation); len(cfg.Areas) > 0 && slices.Contains(AllAreas, area) && !slices.Contains(cfg.Areas, area) {
			skip = "its area, " + area + ", is not replayed"
		}
		if skip != "" {
			res.Skipped = skip
			for _, id := range idsOf(rec.Response.Body) {
				tainted[id] = true
			}
			if rec.Stream() {
				for _, id := range idsOf([]byte(rec.Response.Events[0])) {
					tainted[id] = true
				}
			}
			out = append(out, res)
			continue
		}
		ex := &exchange{req: &r}
		if err := t.send(ex); err != nil {
			return out, fmt.Errorf("replaying %s:%d: %w", rec.File, rec.Line, err)
		}
		res.Status = ex.status
		res.Differences = compareReplies(rec, ex)
		if rec.Stream() {
			// A stream names what it created in its first event (a
			// Responses stream's response.created).
			mapIDs([]byte(rec.Response.Events[0]), firstEventData(ex.body), ids, false)
		} else {
			mapIDs(rec.Response.Body, ex.body, ids, rec.Request.Method == http.MethodPost)
		}
		out = append(out, res)
	}
	return out, nil
}

// replayRequest rebuilds a recorded request with the replay's ids, or
// says why it cannot be sent.
func replayRequest(rec Record, ids map[string]string, tainted map[string]bool) (request, string) {
	rq := rec.Request
	body := rq.Bytes()
	switch {
	case rq.Truncated:
		return request{}, "the request body was cut at the recorder's max_body"
	case len(body) == 0 && (strings.HasPrefix(rq.Header.Get("Content-Type"), "multipart/") || !slices.Contains([]string{"", "0"}, rq.Header.Get("Content-Length"))):
		return request{}, fmt.Sprintf("the request body (%s, Content-Length %q) was not recorded", rq.Header.Get("Content-Type"), rq.Header.Get("Content-Length"))
	}
	text := rq.Path + "?" + rq.Query + string(body)
	for id := range tainted {
		if strings.Contains(text, id) {
			return request{}, "it uses " + id + ", created by a request that was not replayed"
		}
	}
	subst := func(s string) string {
		for old, repl := range ids {
			s = strings.ReplaceAll(s, old, repl)
		}
		return s
	}
	query, _ := url.ParseQuery(subst(rq.Query))
	r := request{method: rq.Method, path: subst(rq.Path), query: query, raw: []byte(subst(string(body))), contentType: rq.Header.Get("Content-Type"), header: map[string]string{}}
	// The recorded credential is redacted: send none where none was sent,
	// a wrong one where the recorded one was refused.
	switch {
	case rq.Header.Get("Authorization") == "":
		r.noAuth = true
	case rec.Status == http.StatusUnauthorized:
		r.header["Authorization"] = "Bearer " + probeWrongKey
	}
	for name, values := range rq.Header {
		if !replayHeaders[http.CanonicalHeaderKey(name)] && len(values) > 0 && r.header[name] == "" {
			r.header[name] = values[0]
		}
	}
	return r, ""
}

// compareReplies lists how a replayed reply differs from the recorded one,
// and where it departs from the schemas itself.
func compareReplies(rec Record, ex *exchange) []string {
	var diffs []string
	if ex.status != rec.Status {
		diffs = append(diffs, fmt.Sprintf("status %d, recorded %d", ex.status, rec.Status))
	}
	if rec.Response.Truncated {
		return diffs
	}
	if rec.Stream() {
		findings, choices := checkStream(rec.Operation, ex.body, wantsUsage(rec.Request.Body))
		_, recordedChoices := checkStream(rec.Operation, streamEvents(rec.Response.Events), wantsUsage(rec.Request.Body))
		if choices != recordedChoices {
			diffs = append(diffs, fmt.Sprintf("stream of %d choices, recorded %d", choices, recordedChoices))
		}
		for _, f := range findings {
			diffs = append(diffs, "stream: "+f.String())
		}
		return diffs
	}
	replayed := Record{Operation: rec.Operation, Request: rec.Request, Status: ex.status}
	if json.Valid(ex.body) {
		replayed.Response.Body = ex.body
	} else {
		replayed.Response.BodyText = string(ex.body)
	}
	for _, f := range CheckRecord(replayed).Findings {
		diffs = append(diffs, "reply: "+f)
	}
	var a, b any
	if json.Unmarshal(rec.Response.Body, &a) != nil || json.Unmarshal(ex.body, &b) != nil {
		return diffs
	}
	recordedShape, replayedShape := map[string]string{}, map[string]string{}
	shape(a, "", recordedShape)
	shape(b, "", replayedShape)
	return append(diffs, compareShapes(recordedShape, replayedShape)...)
}

// shape records the kind of every value of a JSON document by path;
// array elements share the path `array[]`, present when it has any.
func shape(v any, path string, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		out[path] = "object"
		for k, e := range x {
			shape(e, path+"."+k, out)
		}
	case []any:
		out[path] = "array"
		for _, e := range x {
			shape(e, path+"[]", out)
		}
	case string:
		out[path] = "string"
	case float64:
		out[path] = "number"
	case bool:
		out[path] = "boolean"
	case nil:
		out[path] = "null"
	}
}

// compareShapes lists paths present on one side only or with other kinds.
// Null matches any kind (a value, not a shape), and elements of an array
// empty on one side are not compared.
func compareShapes(recorded, replayed map[string]string) []string {
	paths := map[string]bool{}
	for p := range recorded {
		paths[p] = true
	}
	for p := range replayed {
		paths[p] = true
	}
	var diffs []string
	for p := range paths {
		a, inA := recorded[p]
		b, inB := replayed[p]
		switch {
		case underOneSidedArray(p, recorded, replayed):
		case !inA:
			diffs = append(diffs, fmt.Sprintf("%s: %s in the reply, not recorded", p, b))
		case !inB:
			diffs = append(diffs, fmt.Sprintf("%s: recorded %s, missing from the reply", p, a))
		case a != b && a != "null" && b != "null":
			diffs = append(diffs, fmt.Sprintf("%s: %s in the reply, recorded %s", p, b, a))
		}
	}
	sort.Strings(diffs)
	return diffs
}

func underOneSidedArray(path string, a, b map[string]string) bool {
	for i := strings.Index(path, "[]"); i >= 0; {
		prefix := path[:i+2]
		_, inA := a[prefix]
		_, inB := b[prefix]
		if inA != inB {
			return true
		}
		next := strings.Index(path[i+2:], "[]")
		if next < 0 {
			break
		}
		i += 2 + next
	}
	return false
}

// idFields are the fields whose values are object ids.
func idField(key string) bool { return key == "id" || strings.HasSuffix(key, "_id") }

// mapIDs pairs the ids of a recorded reply with those of its replay, field
// by field; posted says the request was a POST, whose list reply (the
// items a conversation's items.create added) holds what it created.
func mapIDs(recorded, replayed []byte, ids map[string]string, posted bool) {
	var a, b any
	if json.Unmarshal(recorded, &a) != nil || json.Unmarshal(replayed, &b) != nil {
		return
	}
	// A list read pairs nothing: it creates no object, and what it shows
	// besides the replayed flow's objects (those of other checks that ran
	// meanwhile) differs between the recording and the replay.
	if m, ok := a.(map[string]any); ok && !posted {
		if _, isList := m["data"].([]any); isList {
			return
		}
	}
	var walk func(a, b any)
	walk = func(a, b any) {
		switch x := a.(type) {
		case map[string]any:
			y, _ := b.(map[string]any)
			for k, v := range x {
				if s, ok := v.(string); ok && idField(k) {
					// Creations come first: a later list's first_id must not
					// re-pair an id; short values (custom ids) are not ids.
					if r, ok := y[k].(string); ok && len(s) >= 8 && r != "" && ids[s] == "" {
						ids[s] = r
					}
					continue
				}
				walk(v, y[k])
			}
		case []any:
			y, _ := b.([]any)
			for i := range min(len(x), len(y)) {
				walk(x[i], y[i])
			}
		}
	}
	walk(a, b)
}

// firstEventData is the data of a stream's first event.
func firstEventData(raw []byte) []byte {
	var first []byte
	split := sse.Splitter{OnEvent: func(ev sse.Event) {
		if first == nil {
			first = bytes.Clone(ev.Data)
		}
	}}
	split.Write(raw)
	return first
}

// idsOf lists the ids of a recorded reply.
func idsOf(body []byte) []string {
	var ids []string
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return nil
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && idField(k) && s != "" {
					ids = append(ids, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	return ids
}

// WriteReplay writes the replayed records that differ or were skipped,
// then a summary; it returns how many differ.
func WriteReplay(w io.Writer, results []ReplayResult) (int, error) {
	var b bytes.Buffer
	differ, skipped := 0, 0
	for _, r := range results {
		switch {
		case r.Skipped != "":
			skipped++
			fmt.Fprintf(&b, "%s:%d %s skipped: %s\n", r.File, r.Line, r.Operation, r.Skipped)
		case len(r.Differences) > 0:
			differ++
			fmt.Fprintf(&b, "%s:%d %s (status %d, recorded %d)\n", r.File, r.Line, r.Operation, r.Status, r.RecordedStatus)
			for _, d := range r.Differences {
				fmt.Fprintf(&b, "    %s\n", d)
			}
		}
	}
	fmt.Fprintf(&b, "%d records replayed: %d differ, %d skipped\n", len(results), differ, skipped)
	_, err := w.Write(b.Bytes())
	return differ, err
}

// operationArea is the area of the suite an operation ID belongs to:
// batches.create -> batches, chat.completions.create -> chat. Operations
// of no area (models.list, unmatched) are replayed whatever the areas.
func operationArea(op string) string {
	area, _, _ := strings.Cut(op, ".")
	return area
}
