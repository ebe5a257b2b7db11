package conformance

import (
	"net/http"
)

const (
	specEnvelope = "Public API: every failure is `{\"error\": {\"message\", \"type\", \"param\", \"code\"}}`, all four present; 400 invalid request, 404 not found."
	specNotFound = "Public API: an unknown object is 404 (`No such File object: file-abc`, type `invalid_request_error`), and the SDKs expect 404 for an unknown path."
)

var errorChecks = []Check{
	{ID: "errors.unknown-path", Area: AreaErrors, Spec: specNotFound + " Paths carry the version prefix /v1.",
		run: func(t *T) {
			for _, m := range []string{http.MethodGet, http.MethodPost} {
				r := request{method: m, path: "/v1/conformance/no-such-path"}
				if m == http.MethodPost {
					r.json = map[string]any{}
				}
				t.expectStatus(t.do(r), http.StatusNotFound)
			}
		}},
	{ID: "errors.wrong-method", Area: AreaErrors, Requires: []string{AreaChat}, Spec: specEnvelope + " A method an operation does not have is refused (404 or 405).",
		run: func(t *T) {
			ex := t.do(request{method: http.MethodPut, path: "/v1/chat/completions", json: t.chatBody("Hello")})
			t.expect(ex.status == http.StatusNotFound || ex.status == http.StatusMethodNotAllowed, ex, "status 404 or 405", "%s", ex.seenStatus())
		}},
	{ID: "errors.malformed-json", Area: AreaErrors, Requires: []string{AreaChat}, Spec: specEnvelope + " All bodies are JSON.",
		run: func(t *T) {
			ex := t.do(request{method: http.MethodPost, path: "/v1/chat/completions", raw: []byte(`{"model": "x", "messages": [`), contentType: "application/json"})
			if t.expectStatus(ex, http.StatusBadRequest) {
				t.expectInvalidRequest(ex)
			}
		}},
	{ID: "errors.missing-required", Area: AreaErrors, Requires: []string{AreaChat}, Spec: "Create chat completion: `messages` and `model` are required. " + specEnvelope,
		run: func(t *T) {
			for _, body := range []map[string]any{
				{"messages": []any{map[string]any{"role": "user", "content": "Hello"}}},
				{"model": t.cfg.Model},
				{"model": t.cfg.Model, "messages": []any{}},
			} {
				ex := t.do(request{method: http.MethodPost, path: "/v1/chat/completions", json: body})
				field := "messages"
				if _, ok := body["model"]; !ok {
					field = "model"
				}
				t.expectParam(ex, field)
			}
		}},
	unknownID("threads.retrieve", AreaThreads, "/v1/threads/thread_conformance_unknown", true),
	unknownID("files.retrieve", AreaFiles, "/v1/files/file-conformance-unknown", false),
	unknownID("files.content", AreaFiles, "/v1/files/file-conformance-unknown/content", false),
	unknownID("batches.retrieve", AreaBatches, "/v1/batches/batch_conformance_unknown", false),
	unknownID("vector_stores.files.list", AreaVectorStores, "/v1/vector_stores/vs_conformance_unknown/files", true),
}

// unknownID is a check that an unknown object is 404.
func unknownID(op, area, path string, beta bool) Check {
	return Check{ID: "errors.unknown-id." + op, Area: AreaErrors, Requires: []string{area}, Spec: specNotFound,
		run: func(t *T) {
			ex := t.do(request{method: http.MethodGet, path: path, beta: beta})
			if t.expectStatus(ex, http.StatusNotFound) {
				t.expectInvalidRequest(ex)
			}
		}}
}

// expectInvalidRequest holds a 400 to the public error type.
func (t *T) expectInvalidRequest(ex *exchange) bool {
	e := ex.errorOf()
	return t.expect(e.Type == "invalid_request_error", ex, "type invalid_request_error", "type %q", e.Type)
}
