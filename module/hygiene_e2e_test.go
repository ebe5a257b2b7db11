package modelgate_test

import (
	"strings"
	"testing"
)

// goErrorText are phrases of Go's own error strings (encoding/json, io,
// mime/multipart) that must never reach a client's envelope.
var goErrorText = []string{"invalid character", "json:", "Go struct", "Go value", "unexpected EOF", "cannot unmarshal",
	"looking for beginning", "no multipart boundary", "struct {", "[]string", "map[string]"}

// TestEnvelopeMessagesHoldNoGoErrorText sends malformed bodies to every
// kind of handler (the gateway's own parse, the local store's threads and
// vector stores, the reference engine, a multipart upload) and checks each
// answer is a 400 envelope whose message speaks the public API's terms.
func TestEnvelopeMessagesHoldNoGoErrorText(t *testing.T) {
	base := startLocal(t, t.TempDir())
	json := map[string]string{"Authorization": "Bearer " + clientKey, "Content-Type": "application/json", "OpenAI-Beta": "assistants=v2"}
	for _, tc := range []struct{ path, contentType, body string }{
		{"/v1/chat/completions", "", `{"model": "gpt-4o", "messages": [}`},
		{"/v1/chat/completions", "", `{"model": "gpt-4o", "messages": [{"role":"user","content":"hi"}]`},
		{"/v1/threads", "", `{"metadata": {"a": 1}, "messages": [{"role":"user","content":"hi","attachments":"x"}]}`},
		{"/v1/threads", "", `{"tool_resources": {"code_interpreter": {"file_ids": "file-1"}}}`},
		{"/v1/vector_stores", "", `{"name": 5}`},
		{"/v1/vector_stores", "", `{"file_ids": {"a": 1}}`},
		{"/v1/files", "multipart/form-data", "--x\r\n"},
	} {
		h := json
		if tc.contentType != "" {
			h = merge(json, map[string]string{"Content-Type": tc.contentType})
		}
		resp, env := rawRequest(t, "POST", base+tc.path, tc.body, h)
		if resp.StatusCode != 400 {
			t.Errorf("POST %s %s: %d %s, want 400", tc.path, tc.body, resp.StatusCode, lastBody)
			continue
		}
		for _, phrase := range goErrorText {
			if strings.Contains(env.Error.Message, phrase) {
				t.Errorf("POST %s %s: the message holds Go's %q: %s", tc.path, tc.body, phrase, env.Error.Message)
			}
		}
	}
}
