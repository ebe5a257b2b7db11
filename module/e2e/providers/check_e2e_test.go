package providers

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

func TestResponseChecking(t *testing.T) {
	nonconforming := `{"id":"c","object":"chat.completion","created":1,"model":"m"}` // no choices
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, nonconforming)
	})
	t.Run("report passes the reply and records a finding", func(t *testing.T) {
		rec := filepath.Join(t.TempDir(), "r.jsonl")
		base := gatewaytest.CheckGateway(t, provider.URL, "report", rec)
		resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", gatewaytest.ChatJSON, gatewaytest.ChatHeaders)
		if resp.StatusCode != 200 || string(gatewaytest.LastBody) != nonconforming {
			t.Fatalf("report mode changed the reply: %d %s", resp.StatusCode, gatewaytest.LastBody)
		}
		findings := fmt.Sprint(gatewaytest.ReadRecords(t, rec, 1)[0]["findings"])
		if !strings.Contains(findings, "choices: is required") {
			t.Fatalf("record findings %s", findings)
		}
	})
	t.Run("strict answers 502", func(t *testing.T) {
		base := gatewaytest.CheckGateway(t, provider.URL, "strict", filepath.Join(t.TempDir(), "r.jsonl"))
		resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", gatewaytest.ChatJSON, gatewaytest.ChatHeaders)
		if resp.StatusCode != 502 || *env.Error.Code != "upstream_nonconforming" {
			t.Fatalf("strict: %d %+v", resp.StatusCode, env.Error)
		}
	})
	t.Run("broken stream is relayed and reported", func(t *testing.T) {
		broken := strings.Replace(gatewaytest.StreamEvents, "data: [DONE]\n\n", "", 1)
		broken = strings.Replace(broken, `"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]`, `"tool_calls":[{"function":{"arguments":"{\"city\":"}}]`, 1)
		streamer := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, broken)
		})
		rec := filepath.Join(t.TempDir(), "r.jsonl")
		base := gatewaytest.CheckGateway(t, streamer.URL, "strict", rec)
		resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"x"}]}`, gatewaytest.ChatHeaders)
		if resp.StatusCode != 200 || string(gatewaytest.LastBody) != broken {
			t.Fatalf("stream not relayed as sent: %d", resp.StatusCode)
		}
		records := gatewaytest.ReadRecords(t, rec, 1)
		findings := fmt.Sprint(records[0]["findings"])
		if !strings.Contains(findings, "without data: [DONE]") || !strings.Contains(findings, "index: is required") {
			t.Fatalf("stream findings %s", findings)
		}
		events, _ := records[0]["response"].(map[string]any)["events"].([]any)
		// The six sent, and the error event that ends a stream closed
		// without its [DONE] (upstream_stream_cut).
		if len(events) != 7 || !strings.Contains(fmt.Sprint(events[6]), "upstream_stream_cut") {
			t.Fatalf("recorded %d events, want the 6 sent and the cut: %v", len(events), events)
		}
	})
}

// TestRequestsOutsideTheLimitsNeverReachTheUpstream sends requests that
// break the spec's rules: each gets 400 with the param, and the provider
// sees none of them.
func TestRequestsOutsideTheLimitsNeverReachTheUpstream(t *testing.T) {
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, gatewaytest.ToolCallCompletion)
	})
	base := gatewaytest.StartGateway(t, provider.URL, "")
	for body, param := range map[string]string{
		`{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":2.5}`:                        "temperature",
		`{"model":"m","messages":[{"role":"user","content":"x"}],"stop":["a","b","c","d","e"]}`:             "stop",
		`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","content":"r"}]}`:            "messages[1].tool_call_id",
		`{"messages":[{"role":"user","content":"x"}]}`:                                                      "model",
		`{"model":"o3","messages":[{"role":"user","content":"x"}],"max_tokens":5}`:                          "max_tokens",
		`{"model":"m","messages":[{"role":"user","content":"x"}],"metadata":` + gatewaytest.Pairs17() + `}`: "metadata",
		`{"model":"m","messages":[{"role":"user","content":"x"}],"top_logprobs":21,"logprobs":true}`:        "top_logprobs",
	} {
		resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", body, gatewaytest.ChatHeaders)
		if resp.StatusCode != 400 || env.Error.Param == nil || *env.Error.Param != param || env.Error.Type != "invalid_request_error" {
			t.Errorf("%s: %d %+v, want 400 param %s", body, resp.StatusCode, env.Error, param)
		}
	}
	resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/vector_stores/vs_1/search", `{"query":"q","max_num_results":51}`,
		gatewaytest.Merge(gatewaytest.ChatHeaders, map[string]string{"OpenAI-Beta": "assistants=v2"}))
	if resp.StatusCode != 400 || *env.Error.Param != "max_num_results" || env.Error.Message != "max_num_results must be at most 50" {
		t.Errorf("search: %d %+v", resp.StatusCode, env.Error)
	}
	resp, env = gatewaytest.RawRequest(t, "GET", base+"/v1/vector_stores/vs_1/files?limit=101", "", gatewaytest.ChatHeaders)
	if resp.StatusCode != 400 || *env.Error.Param != "limit" {
		t.Errorf("list limit: %d %+v", resp.StatusCode, env.Error)
	}
	provider.Mu.Lock()
	n := len(provider.Requests)
	provider.Mu.Unlock()
	if n != 0 {
		t.Fatalf("%d refused requests reached the provider", n)
	}
}

// TestUploadsAreRecorded: a multipart upload streams past the gateway
// unbuffered, yet a small one is recorded whole (binary bytes as base64)
// so that replay can send it again, and one over max_body is marked cut.
func TestUploadsAreRecorded(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		record %s {
			max_body 4KiB
		}
		upstream local local {
			data_dir %s
		}
	}`, gatewaytest.ClientKey, rec, t.TempDir()))
	small := []byte{0xff, 0xfe, 0x00, 'b', 'i', 'n'}
	upload := func(content []byte) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("purpose", "assistants")
		fw, _ := mw.CreateFormFile("file", "data.bin")
		fw.Write(content)
		mw.Close()
		resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/files", body.String(), map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "Content-Type": mw.FormDataContentType()})
		if resp.StatusCode != 200 {
			t.Fatalf("upload: %d %s", resp.StatusCode, gatewaytest.LastBody)
		}
	}
	upload(small)
	upload(bytes.Repeat([]byte("x"), 8<<10))
	records := gatewaytest.ReadRecords(t, rec, 2)

	first := records[0]["request"].(map[string]any)
	raw, err := base64.StdEncoding.DecodeString(fmt.Sprint(first["body_base64"]))
	if err != nil || !bytes.Contains(raw, small) || first["truncated"] != nil {
		t.Fatalf("small upload recorded as %v (decoded %q, %v)", first, raw, err)
	}
	second := records[1]["request"].(map[string]any)
	if second["truncated"] != true || second["body_base64"] != nil || len(fmt.Sprint(second["body_text"])) != 4<<10 {
		t.Fatalf("large upload: truncated=%v, %d bytes of text kept", second["truncated"], len(fmt.Sprint(second["body_text"])))
	}
}
