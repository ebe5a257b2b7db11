package conformance_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/conformance"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// fault breaks one rule of the API in an otherwise conforming target:
// intercept answers a request itself (ok false: forward it), mutate
// rewrites a forwarded reply's body.
type fault struct {
	name  string
	areas []string
	// only restricts the run to checks matching these patterns (default
	// every check of the areas).
	only []string
	want []string // exactly the checks that must fail
	// mayFail are checks the fault breaks only when the target holds
	// other objects at that moment (which checks running side by side
	// decide): they may fail too, no other check may.
	mayFail []string
	// paced runs the suite expecting the gateway's stream pacing;
	// holdBack buffers a stream whole (without it, and without mutate,
	// streams pass through event by event).
	paced, holdBack bool
	// cases bounds the generated cases per check (default 2: the faults
	// of other checks need few).
	cases     int
	intercept func(f *faultState, r *http.Request, body []byte) (status int, reply string, ok bool)
	// rewrite changes a request's body before it is forwarded.
	rewrite func(r *http.Request, body []byte) []byte
	mutate  func(f *faultState, r *http.Request, body []byte, status int, reply []byte) []byte
}

// faultState is what a fault remembers between requests.
type faultState struct {
	mu      sync.Mutex
	threads map[string][]byte // created threads, by id
	deleted map[string]bool
}

// brokenTarget serves the gateway at base through a fault.
func brokenTarget(t *testing.T, base string, f fault) string {
	state := &faultState{threads: map[string][]byte{}, deleted: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if f.rewrite != nil {
			body = f.rewrite(r, body)
		}
		if f.intercept != nil {
			if status, reply, ok := f.intercept(state, r, body); ok {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				io.WriteString(w, reply)
				return
			}
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		// Replies come back plain, for the fault to read and rewrite.
		req.Header.Del("Accept-Encoding")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") && f.mutate == nil && !f.holdBack {
			copyHeader(w, resp)
			rc := http.NewResponseController(w)
			buf := make([]byte, 4096)
			for {
				n, err := resp.Body.Read(buf)
				w.Write(buf[:n])
				rc.Flush()
				if err != nil {
					return
				}
			}
		}
		reply, _ := io.ReadAll(resp.Body)
		if f.mutate != nil {
			reply = f.mutate(state, r, body, resp.StatusCode, reply)
		}
		copyHeader(w, resp)
		w.Write(reply)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// copyHeader writes a forwarded reply's status and headers.
func copyHeader(w http.ResponseWriter, resp *http.Response) {
	for k, v := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(resp.StatusCode)
}

func isThreadPath(r *http.Request) (id string, ok bool) {
	id, ok = strings.CutPrefix(r.URL.Path, "/v1/threads/")
	return id, ok && id != "" && !strings.Contains(id, "/")
}

// rewriteJSON decodes a JSON reply, changes it and encodes it again.
func rewriteJSON(reply []byte, change func(map[string]any)) []byte {
	var doc map[string]any
	if json.Unmarshal(reply, &doc) != nil {
		return reply
	}
	change(doc)
	out, _ := json.Marshal(doc)
	return out
}

// notImplementedAreas run against a target answering 501 for batches and
// vector stores: every check that needs them must fail, none skip.
var notImplementedAreas = []string{conformance.AreaBatches, conformance.AreaVectorStores, conformance.AreaLimits, conformance.AreaErrors, conformance.AreaAuth}

var faults = []fault{
	{name: "conforming proxy", want: nil, paced: true},
	{name: "stream held back", areas: []string{conformance.AreaChat}, paced: true, holdBack: true, want: []string{"chat.stream.paced"}},
	{name: "list without has_more", areas: filesArea, want: []string{"files.list.paging", "files.list.order", "files.round-trip", "files.isolation", "generated.files.list.valid", "invariant.round-trip.files"},
		mutate: func(_ *faultState, r *http.Request, _ []byte, status int, reply []byte) []byte {
			if r.Method == http.MethodGet && r.URL.Path == "/v1/files" && status == http.StatusOK {
				return rewriteJSON(reply, func(d map[string]any) { delete(d, "has_more") })
			}
			return reply
		}},
	{name: "wrong object on retrieve", areas: []string{conformance.AreaThreads, conformance.AreaFiles, conformance.AreaVectorStores}, want: []string{"threads.lifecycle", "threads.round-trip", "threads.isolation", "invariant.round-trip.threads"},
		mutate: func(_ *faultState, r *http.Request, _ []byte, status int, reply []byte) []byte {
			if _, ok := isThreadPath(r); ok && r.Method == http.MethodGet && status == http.StatusOK {
				return rewriteJSON(reply, func(d map[string]any) { d["object"] = "thread.object" })
			}
			return reply
		}},
	{name: "metadata limit not enforced", areas: []string{conformance.AreaLimits, conformance.AreaThreads}, want: []string{"limits.metadata.pairs.threads.create"},
		intercept: func(_ *faultState, r *http.Request, body []byte) (int, string, bool) {
			var req struct {
				Metadata map[string]any `json:"metadata"`
			}
			if r.Method == http.MethodPost && r.URL.Path == "/v1/threads" && json.Unmarshal(body, &req) == nil && len(req.Metadata) == 17 {
				md, _ := json.Marshal(req.Metadata)
				return http.StatusOK, `{"id":"thread_fake","object":"thread","created_at":1,"metadata":` + string(md) + `,"tool_resources":{}}`, true
			}
			return 0, "", false
		}},
	{name: "stream without [DONE]", areas: chatArea, want: []string{"chat.stream.basic", "chat.stream.n", "chat.stream.usage", "chat.stream.tools", "chat.finish-reason.length", "chat.created-seconds", "invariant.stream-equals-non-stream.chat.completions.create.length", "invariant.stream-equals-non-stream.chat.completions.create.text", "invariant.stream-equals-non-stream.chat.completions.create.tool-calls"},
		mutate: func(_ *faultState, r *http.Request, _ []byte, _ int, reply []byte) []byte {
			return bytes.ReplaceAll(reply, []byte("data: [DONE]\n\n"), nil)
		}},
	{name: "tool-call delta without index", areas: chatArea, want: []string{"chat.stream.tools", "invariant.stream-equals-non-stream.chat.completions.create.tool-calls"},
		mutate: func(_ *faultState, r *http.Request, _ []byte, _ int, reply []byte) []byte {
			return regexp.MustCompile(`(\{)"index":\d+,("id"|"function")`).ReplaceAll(reply, []byte("$1$2"))
		}},
	{name: "deleted thread still retrievable", areas: threadArea, want: []string{"threads.lifecycle", "invariant.round-trip.threads"},
		intercept: func(f *faultState, r *http.Request, _ []byte) (int, string, bool) {
			id, ok := isThreadPath(r)
			f.mu.Lock()
			defer f.mu.Unlock()
			if ok && r.Method == http.MethodGet && f.deleted[id] {
				return http.StatusOK, string(f.threads[id]), true
			}
			return 0, "", false
		},
		mutate: func(f *faultState, r *http.Request, _ []byte, status int, reply []byte) []byte {
			id, ok := isThreadPath(r)
			f.mu.Lock()
			defer f.mu.Unlock()
			switch {
			case ok && r.Method == http.MethodGet && status == http.StatusOK:
				f.threads[id] = reply
			case ok && r.Method == http.MethodDelete && status == http.StatusOK:
				f.deleted[id] = true
			}
			return reply
		}},
	{name: "200 instead of 401", areas: []string{conformance.AreaAuth, conformance.AreaFiles}, want: []string{"auth.no-key.files.list"},
		intercept: func(_ *faultState, r *http.Request, _ []byte) (int, string, bool) {
			if r.Header.Get("Authorization") == "" && r.URL.Path == "/v1/files" {
				return http.StatusOK, `{"object":"list","data":[],"first_id":null,"last_id":null,"has_more":false}`, true
			}
			return 0, "", false
		}},
	{name: "n ignored", areas: chatArea, want: []string{"chat.n"},
		mutate: func(_ *faultState, r *http.Request, body []byte, status int, reply []byte) []byte {
			if r.URL.Path == "/v1/chat/completions" && status == http.StatusOK && bytes.Contains(body, []byte(`"n":3`)) {
				return rewriteJSON(reply, func(d map[string]any) { d["choices"] = d["choices"].([]any)[:1] })
			}
			return reply
		}},
	{name: "batches and vector stores not implemented", areas: notImplementedAreas,
		want: func() []string {
			var ids []string
			for _, ch := range conformance.Checks() {
				if ch.ID == "limits.batches.input-requests" || slices.ContainsFunc(append([]string{ch.Area}, ch.Requires...), func(a string) bool { return !slices.Contains(notImplementedAreas, a) }) {
					continue // heavy (skipped without Config.Heavy) or not run
				}
				for _, a := range append([]string{ch.Area}, ch.Requires...) {
					if a == conformance.AreaBatches || a == conformance.AreaVectorStores {
						ids = append(ids, ch.ID)
						break
					}
				}
			}
			return ids
		}(),
		intercept: func(_ *faultState, r *http.Request, _ []byte) (int, string, bool) {
			if strings.HasPrefix(r.URL.Path, "/v1/batches") || strings.HasPrefix(r.URL.Path, "/v1/vector_stores") {
				return http.StatusNotImplemented, `{"error":{"message":"not implemented","type":"not_implemented","param":null,"code":null}}`, true
			}
			return 0, "", false
		}},
}

// TestSuiteCatchesBrokenTargets runs the suite through each fault and
// requires exactly the checks the fault breaks to fail, with evidence.
func TestSuiteCatchesBrokenTargets(t *testing.T) {
	base := testgateway.Quickstart(t, secondOwner+pacedEngine)
	for _, f := range slices.Concat(faults, promiseFaults, contractFaults, invariantFaults) {
		t.Run(f.name, func(t *testing.T) {
			areas := f.areas
			if areas == nil {
				areas = implementedAreas
			}
			cfg := conformance.Config{BaseURL: brokenTarget(t, base, f), APIKey: devKey, SecondAPIKey: secondKey, Areas: areas, Only: f.only, MaxCases: cmp.Or(f.cases, 2)}
			if f.paced {
				cfg.ExpectStreamInterval = streamInterval
			}
			report, err := conformance.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, res := range report.Results {
				if res.Status != conformance.Fail {
					continue
				}
				failed = append(failed, res.ID)
				if len(res.Evidence) == 0 || res.Evidence[0].Expected == "" || res.Evidence[0].Seen == "" {
					t.Errorf("%s failed without evidence: %+v", res.ID, res)
				}
			}
			want := slices.Clone(f.want)
			slices.Sort(want)
			failed = slices.DeleteFunc(failed, func(id string) bool { return slices.Contains(f.mayFail, id) && !slices.Contains(want, id) })
			slices.Sort(failed)
			if !slices.Equal(failed, want) {
				var text strings.Builder
				report.WriteText(&text)
				t.Fatalf("failed checks %v, want %v\n%s", failed, want, text.String())
			}
		})
	}
}
