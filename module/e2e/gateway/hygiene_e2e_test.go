package gateway

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/gatewaytest"
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
	base := gatewaytest.StartLocal(t, t.TempDir())
	json := map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "Content-Type": "application/json", "OpenAI-Beta": "assistants=v2"}
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
			h = gatewaytest.Merge(json, map[string]string{"Content-Type": tc.contentType})
		}
		resp, env := gatewaytest.RawRequest(t, "POST", base+tc.path, tc.body, h)
		if resp.StatusCode != 400 {
			t.Errorf("POST %s %s: %d %s, want 400", tc.path, tc.body, resp.StatusCode, gatewaytest.LastBody)
			continue
		}
		for _, phrase := range goErrorText {
			if strings.Contains(env.Error.Message, phrase) {
				t.Errorf("POST %s %s: the message holds Go's %q: %s", tc.path, tc.body, phrase, env.Error.Message)
			}
		}
	}
}

// TestRecordsStayUTF8: a client's body and a provider's reply holding
// invalid UTF-8 inside JSON strings are relayed as they are, and recorded
// as valid UTF-8 JSON lines (each bad byte as \ufffd) that name the parts
// replaced in invalid_utf8. On main before this the bytes were copied into
// the record, whose line then was not UTF-8 (jq, Python's json refuse it).
func TestRecordsStayUTF8(t *testing.T) {
	reply := "{\"id\":\"c\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"caf\xe9\"},\"finish_reason\":\"stop\"}]}"
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	})
	path := filepath.Join(t.TempDir(), "r.jsonl")
	base := gatewaytest.CheckGateway(t, provider.URL, "report", path)
	body := "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe hi\"}]}"
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", body, gatewaytest.ChatHeaders)
	_, sent := provider.Last(t)
	if resp.StatusCode != 200 || string(gatewaytest.LastBody) != reply || string(sent) != body {
		t.Fatalf("not relayed as sent: %d %q (provider got %q)", resp.StatusCode, gatewaytest.LastBody, sent)
	}
	rec := gatewaytest.ReadRecords(t, path, 1)[0]
	if got := fmt.Sprint(rec["invalid_utf8"]); got != "[request.body response.body]" {
		t.Errorf("invalid_utf8 = %s, want [request.body response.body]", got)
	}
	if got := fmt.Sprint(rec["request"].(map[string]any)["body"]); !strings.Contains(got, "\ufffd\ufffd hi") {
		t.Errorf("request body recorded as %s", got)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(data) {
		t.Fatalf("the record file is not UTF-8: %q", data)
	}
}
