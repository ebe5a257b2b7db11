package conformance

import (
	"net/http"
	"strings"
)

// authTarget is an operation the auth probes are sent to.
type authTarget struct {
	op   string
	area string
	req  func(t *T) request
}

var authTargets = []authTarget{
	{"chat.completions.create", AreaChat, func(t *T) request {
		return request{method: http.MethodPost, path: "/v1/chat/completions", json: t.chatBody("Hello")}
	}},
	{"files.list", AreaFiles, func(t *T) request { return request{method: http.MethodGet, path: "/v1/files"} }},
	{"threads.create", AreaThreads, func(t *T) request {
		return request{method: http.MethodPost, path: "/v1/threads", json: map[string]any{}, beta: true}
	}},
	{"batches.create", AreaBatches, func(t *T) request {
		return request{method: http.MethodPost, path: "/v1/batches", json: map[string]any{"input_file_id": "file-conformance", "endpoint": "/v1/chat/completions", "completion_window": "24h"}}
	}},
	{"vector_stores.search", AreaVectorStores, func(t *T) request {
		return request{method: http.MethodPost, path: "/v1/vector_stores/vs_conformance/search", json: map[string]any{"query": "q"}, beta: true}
	}},
}

const (
	specCredential = "Credential: Bearer token sent as `Authorization: Bearer <API_KEY>`. (Public API: a missing or invalid key is refused with 401 in the error envelope.)"
	missingKeyText = "You didn't provide an API key"
	wrongKeyText   = "Incorrect API key provided"
	probeWrongKey  = "sk-conformance-wrong-key-0000000000"
)

var authChecks = func() []Check {
	var checks []Check
	for _, target := range authTargets {
		checks = append(checks,
			Check{ID: "auth.no-key." + target.op, Area: AreaAuth, Requires: []string{target.area}, Spec: specCredential + " Missing key: 401, code null, message \"" + missingKeyText + "...\".",
				run: func(t *T) {
					r := target.req(t)
					r.noAuth = true
					t.expectUnauthorized(t.do(r), missingKeyText, "null")
				}},
			Check{ID: "auth.wrong-key." + target.op, Area: AreaAuth, Requires: []string{target.area}, Spec: specCredential + " Wrong key: 401, code invalid_api_key, message \"" + wrongKeyText + ": ...\" without the whole key.",
				run: func(t *T) {
					r := target.req(t)
					r.header = map[string]string{"Authorization": "Bearer " + probeWrongKey}
					ex := t.do(r)
					if t.expectUnauthorized(ex, wrongKeyText, "invalid_api_key") {
						t.expect(!strings.Contains(ex.errorOf().Message, probeWrongKey), ex, "a message that does not repeat the whole key", "%q", ex.errorOf().Message)
					}
				}},
			Check{ID: "auth.not-bearer." + target.op, Area: AreaAuth, Requires: []string{target.area}, Spec: specCredential + " A credential that is not a Bearer token is no credential: 401.",
				run: func(t *T) {
					r := target.req(t)
					r.header = map[string]string{"Authorization": "Basic " + t.cfg.APIKey}
					t.expectStatus(t.do(r), http.StatusUnauthorized)
				}},
		)
	}
	return checks
}()

// expectUnauthorized holds a refused credential to the public 401: its
// status, message and code.
func (t *T) expectUnauthorized(ex *exchange, message, code string) bool {
	if !t.expectStatus(ex, http.StatusUnauthorized) {
		return false
	}
	e := ex.errorOf()
	ok := t.expect(strings.HasPrefix(e.Message, message), ex, "message starting "+message, "%q", e.Message)
	ok = t.expect(e.code() == code, ex, "code "+code, "code %s", e.code()) && ok
	return t.expect(e.Type == "invalid_request_error", ex, "type invalid_request_error", "type %q", e.Type) && ok
}
