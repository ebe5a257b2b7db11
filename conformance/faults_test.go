package conformance_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/conformance"
)

// promiseFaults each break one promise the spec or the public API makes
// that a client can observe: a field that does not come back as sent, an
// order ignored, a unit changed, an owner's objects shown to another.

// onReplies mutates the successful JSON replies of requests matching.
func onReplies(match func(r *http.Request) bool, change func(map[string]any)) func(*faultState, *http.Request, []byte, int, []byte) []byte {
	return func(_ *faultState, r *http.Request, _ []byte, status int, reply []byte) []byte {
		if status == http.StatusOK && match(r) {
			return rewriteJSON(reply, change)
		}
		return reply
	}
}

func pathHas(method, prefix, suffix string) func(r *http.Request) bool {
	return func(r *http.Request) bool {
		return (method == "" || r.Method == method) && strings.HasPrefix(r.URL.Path, prefix) && strings.HasSuffix(r.URL.Path, suffix)
	}
}

// eachObject applies change to a reply object and to each item of a list.
func eachObject(change func(map[string]any)) func(map[string]any) {
	return func(d map[string]any) {
		if items, ok := d["data"].([]any); ok && d["object"] == "list" {
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					change(m)
				}
			}
			return
		}
		change(d)
	}
}

// checksWithPrefix lists the suite's checks whose ID starts with prefix
// and that run in areas.
func checksWithPrefix(areas []string, prefixes ...string) []string {
	var ids []string
	for _, ch := range conformance.Checks() {
		if !slices.Contains(areas, ch.Area) {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(ch.ID, p) {
				ids = append(ids, ch.ID)
				break
			}
		}
	}
	return ids
}

var (
	filesArea   = []string{conformance.AreaFiles}
	chatArea    = []string{conformance.AreaChat}
	vectorAreas = []string{conformance.AreaVectorStores}
	threadArea  = []string{conformance.AreaThreads}
	batchArea   = []string{conformance.AreaBatches}
	isolationOf = []string{conformance.AreaFiles, conformance.AreaThreads, conformance.AreaVectorStores, conformance.AreaBatches}
)

// clampTopP forwards chat requests with top_p above 1 as 1: the range
// not enforced.
func clampTopP(r *http.Request, body []byte) []byte {
	var req map[string]any
	if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil {
		return body
	}
	if p, ok := req["top_p"].(float64); ok && p > 1 {
		req["top_p"] = 1
		body, _ = json.Marshal(req)
	}
	return body
}

// paramNullAreas are the areas the "param null on 400" fault runs.
var paramNullAreas = []string{conformance.AreaErrors, conformance.AreaLimits, conformance.AreaChat, conformance.AreaFiles, conformance.AreaThreads, conformance.AreaBatches, conformance.AreaVectorStores}

var promiseFaults = []fault{
	{name: "top_p range not enforced", areas: chatArea, cases: 40, want: []string{"generated.chat.completions.create.invalid"}, rewrite: clampTopP},
	{name: "unicode metadata refused", areas: []string{conformance.AreaThreads, conformance.AreaFiles, conformance.AreaVectorStores}, cases: 40, want: []string{"generated.threads.create.valid", "generated.threads.create.invalid", "threads.round-trip", "invariant.echo.threads.create.metadata"},
		intercept: func(_ *faultState, r *http.Request, body []byte) (int, string, bool) {
			if r.Method == http.MethodPost && r.URL.Path == "/v1/threads" && bytes.ContainsFunc(body, func(c rune) bool { return c > 127 }) {
				return http.StatusBadRequest, `{"error":{"message":"metadata must be ASCII","type":"invalid_request_error","param":"metadata","code":null}}`, true
			}
			return 0, "", false
		}},
	{name: "files.list limit above the maximum accepted", areas: filesArea, cases: 40, want: []string{"generated.files.list.invalid"},
		intercept: func(_ *faultState, r *http.Request, _ []byte) (int, string, bool) {
			if q := r.URL.Query(); r.Method == http.MethodGet && r.URL.Path == "/v1/files" && q.Get("limit") == "10001" {
				q.Set("limit", "10000")
				r.URL.RawQuery = q.Encode()
			}
			return 0, "", false
		}},
	{name: "filename spaces rewritten", areas: filesArea, want: []string{"files.round-trip", "invariant.echo.files.create.filename"},
		mutate: onReplies(pathHas("", "/v1/files", ""), eachObject(func(d map[string]any) {
			if name, ok := d["filename"].(string); ok {
				d["filename"] = strings.ReplaceAll(name, " ", "_")
			}
		}))},
	// files.list.paging walks a purpose-filtered list a few pages deep:
	// with the filter ignored, it misses its own files when enough others
	// were uploaded before them.
	{name: "purpose filter ignored", areas: filesArea, want: []string{"files.round-trip"}, mayFail: []string{"files.list.paging"},
		intercept: func(_ *faultState, r *http.Request, _ []byte) (int, string, bool) {
			if q := r.URL.Query(); r.Method == http.MethodGet && r.URL.Path == "/v1/files" && q.Has("purpose") {
				q.Del("purpose")
				r.URL.RawQuery = q.Encode()
			}
			return 0, "", false
		}},
	{name: "attribute numbers as strings", areas: vectorAreas, want: []string{"vector_stores.files.round-trip"},
		mutate: onReplies(pathHas("", "/v1/vector_stores/", ""), eachObject(func(d map[string]any) {
			if attrs, ok := d["attributes"].(map[string]any); ok && d["object"] == "vector_store.file" {
				for k, v := range attrs {
					if f, ok := v.(float64); ok {
						attrs[k] = strconv.FormatFloat(f, 'f', -1, 64)
					}
				}
			}
		}))},
	{name: "search results lowest score first", areas: vectorAreas, want: []string{"vector_stores.search"},
		mutate: onReplies(pathHas(http.MethodPost, "/v1/vector_stores/", "/search"), func(d map[string]any) {
			if items, ok := d["data"].([]any); ok {
				slices.Reverse(items)
			}
		})},
	{name: "vector store list ignores order=asc", areas: vectorAreas, want: []string{"vector_stores.list.order"},
		intercept: func(_ *faultState, r *http.Request, _ []byte) (int, string, bool) {
			if q := r.URL.Query(); r.Method == http.MethodGet && r.URL.Path == "/v1/vector_stores" && q.Get("order") == "asc" {
				q.Del("order")
				r.URL.RawQuery = q.Encode()
			}
			return 0, "", false
		}},
	{name: "param null on 400", areas: paramNullAreas,
		want: append(slices.DeleteFunc(checksWithPrefix(paramNullAreas, "limits.metadata.", "limits.chat.", "limits.vector_stores.", "limits.batches.completion-window", "limits.batches.endpoint", "generated."),
			func(id string) bool { return id == "limits.chat.store-images" || strings.HasSuffix(id, ".valid") }),
			"errors.missing-required", "files.upload-rules", "threads.message-roles", "vector_stores.files.create-rules"),
		mutate: func(_ *faultState, _ *http.Request, _ []byte, status int, reply []byte) []byte {
			if status != http.StatusBadRequest {
				return reply
			}
			return rewriteJSON(reply, func(d map[string]any) {
				if e, ok := d["error"].(map[string]any); ok && e["code"] != "invalid_beta" {
					e["param"] = nil
				}
			})
		}},
	// The contract's unixtime format catches it in every completion too.
	{name: "chat created in milliseconds", areas: chatArea, want: chatCompletionChecks,
		mutate: func(_ *faultState, r *http.Request, _ []byte, status int, reply []byte) []byte {
			if r.URL.Path != "/v1/chat/completions" || status != http.StatusOK {
				return reply
			}
			return regexp.MustCompile(`"created":(\d+)`).ReplaceAll(reply, []byte(`"created":${1}123`))
		}},
	{name: "finish_reason stop where the limit cut", areas: chatArea, want: []string{"chat.finish-reason.length"},
		mutate: func(_ *faultState, r *http.Request, _ []byte, _ int, reply []byte) []byte {
			if r.URL.Path != "/v1/chat/completions" {
				return reply
			}
			return bytes.ReplaceAll(reply, []byte(`"finish_reason":"length"`), []byte(`"finish_reason":"stop"`))
		}},
	{name: "tool-call delta without type", areas: chatArea, want: []string{"chat.stream.tools", "invariant.stream-equals-non-stream.chat.completions.create.tool-calls"},
		mutate: func(_ *faultState, r *http.Request, _ []byte, _ int, reply []byte) []byte {
			if !bytes.HasPrefix(reply, []byte("data: ")) {
				return reply
			}
			return bytes.ReplaceAll(reply, []byte(`"type":"function",`), nil)
		}},
	{name: "vector store still retrievable after delete", areas: vectorAreas, want: []string{"vector_stores.lifecycle", "invariant.round-trip.vector_stores"},
		intercept: func(f *faultState, r *http.Request, _ []byte) (int, string, bool) {
			id, _ := strings.CutPrefix(r.URL.Path, "/v1/vector_stores/")
			f.mu.Lock()
			defer f.mu.Unlock()
			if r.Method == http.MethodGet && f.deleted[id] {
				return http.StatusOK, string(f.threads[id]), true
			}
			return 0, "", false
		},
		mutate: func(f *faultState, r *http.Request, _ []byte, status int, reply []byte) []byte {
			id, ok := strings.CutPrefix(r.URL.Path, "/v1/vector_stores/")
			if !ok || strings.Contains(id, "/") || status != http.StatusOK {
				return reply
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			switch r.Method {
			case http.MethodGet:
				f.threads[id] = reply
			case http.MethodDelete:
				f.deleted[id] = f.threads[id] != nil
			}
			return reply
		}},
	{name: "thread tool_resources dropped", areas: append(slices.Clone(threadArea), conformance.AreaFiles, conformance.AreaVectorStores), want: []string{"threads.round-trip", "invariant.round-trip.threads"},
		mutate: onReplies(pathHas("", "/v1/threads", ""), func(d map[string]any) {
			if d["object"] == "thread" {
				d["tool_resources"] = map[string]any{}
			}
		})},
	{name: "batch metadata lost on retrieve", areas: batchArea, want: []string{"batches.round-trip"},
		mutate: onReplies(pathHas(http.MethodGet, "/v1/batches", ""), eachObject(func(d map[string]any) { d["metadata"] = map[string]any{} }))},
	{name: "batch cancel ignored", areas: batchArea, want: []string{"batches.cancel"},
		intercept: func(_ *faultState, r *http.Request, _ []byte) (int, string, bool) {
			if id, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/v1/batches/"), "/cancel"); ok && r.Method == http.MethodPost && r.Header.Get("Authorization") == "Bearer "+devKey {
				return http.StatusOK, `{"id":"` + id + `","object":"batch","endpoint":"/v1/chat/completions","input_file_id":"file-x","completion_window":"24h","status":"in_progress","created_at":1}`, true
			}
			return 0, "", false
		}},
	{name: "404 of another type", areas: []string{conformance.AreaErrors, conformance.AreaFiles, conformance.AreaThreads, conformance.AreaBatches, conformance.AreaVectorStores},
		want: checksWithPrefix([]string{conformance.AreaErrors}, "errors.unknown-id."),
		mutate: func(_ *faultState, _ *http.Request, _ []byte, status int, reply []byte) []byte {
			if status != http.StatusNotFound {
				return reply
			}
			return rewriteJSON(reply, func(d map[string]any) {
				if e, ok := d["error"].(map[string]any); ok {
					e["type"] = "not_found_error"
				}
			})
		}},
	{name: "another owner's objects shown", areas: isolationOf, want: []string{"files.isolation", "threads.isolation", "vector_stores.isolation", "batches.isolation"},
		intercept: func(_ *faultState, r *http.Request, _ []byte) (int, string, bool) {
			if r.Header.Get("Authorization") == "Bearer "+secondKey {
				r.Header.Set("Authorization", "Bearer "+devKey)
			}
			return 0, "", false
		}},
}
