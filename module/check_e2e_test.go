package modelgate_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// readRecords waits (boundedly) until the recorder has written n records.
func readRecords(t *testing.T, path string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var out []map[string]any
		if f, err := os.Open(path); err == nil {
			sc := bufio.NewScanner(f)
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				var rec map[string]any
				if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
					t.Fatalf("record is not JSON: %v", err)
				}
				out = append(out, rec)
			}
			f.Close()
		}
		if len(out) >= n || time.Now().After(deadline) {
			if len(out) < n {
				t.Fatalf("%d records written, want %d", len(out), n)
			}
			return out
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func checkGateway(t *testing.T, providerURL, mode, recordPath string) string {
	return testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		response_check %s
		record %s
		upstream p {
			base_url %s/v1
		}
	}`, clientKey, mode, recordPath, providerURL))
}

const chatJSON = `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}]}`

var chatHeaders = map[string]string{"Authorization": "Bearer " + clientKey, "Content-Type": "application/json"}

func TestResponseChecking(t *testing.T) {
	nonconforming := `{"id":"c","object":"chat.completion","created":1,"model":"m"}` // no choices
	provider := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, nonconforming)
	})
	t.Run("report passes the reply and records a finding", func(t *testing.T) {
		rec := filepath.Join(t.TempDir(), "r.jsonl")
		base := checkGateway(t, provider.URL, "report", rec)
		resp, _ := rawRequest(t, "POST", base+"/v1/chat/completions", chatJSON, chatHeaders)
		if resp.StatusCode != 200 || string(lastBody) != nonconforming {
			t.Fatalf("report mode changed the reply: %d %s", resp.StatusCode, lastBody)
		}
		findings := fmt.Sprint(readRecords(t, rec, 1)[0]["findings"])
		if !strings.Contains(findings, "choices: is required") {
			t.Fatalf("record findings %s", findings)
		}
	})
	t.Run("strict answers 502", func(t *testing.T) {
		base := checkGateway(t, provider.URL, "strict", filepath.Join(t.TempDir(), "r.jsonl"))
		resp, env := rawRequest(t, "POST", base+"/v1/chat/completions", chatJSON, chatHeaders)
		if resp.StatusCode != 502 || *env.Error.Code != "upstream_nonconforming" {
			t.Fatalf("strict: %d %+v", resp.StatusCode, env.Error)
		}
	})
	t.Run("broken stream is relayed and reported", func(t *testing.T) {
		broken := strings.Replace(streamEvents, "data: [DONE]\n\n", "", 1)
		broken = strings.Replace(broken, `"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]`, `"tool_calls":[{"function":{"arguments":"{\"city\":"}}]`, 1)
		streamer := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, broken)
		})
		rec := filepath.Join(t.TempDir(), "r.jsonl")
		base := checkGateway(t, streamer.URL, "strict", rec)
		resp, _ := rawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"x"}]}`, chatHeaders)
		if resp.StatusCode != 200 || string(lastBody) != broken {
			t.Fatalf("stream not relayed as sent: %d", resp.StatusCode)
		}
		records := readRecords(t, rec, 1)
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
	provider := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, toolCallCompletion)
	})
	base := startGateway(t, provider.URL, "")
	for body, param := range map[string]string{
		`{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":2.5}`:                 "temperature",
		`{"model":"m","messages":[{"role":"user","content":"x"}],"stop":["a","b","c","d","e"]}`:      "stop",
		`{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","content":"r"}]}`:     "messages[1].tool_call_id",
		`{"messages":[{"role":"user","content":"x"}]}`:                                               "model",
		`{"model":"o3","messages":[{"role":"user","content":"x"}],"max_tokens":5}`:                   "max_tokens",
		`{"model":"m","messages":[{"role":"user","content":"x"}],"metadata":` + pairs17() + `}`:      "metadata",
		`{"model":"m","messages":[{"role":"user","content":"x"}],"top_logprobs":21,"logprobs":true}`: "top_logprobs",
	} {
		resp, env := rawRequest(t, "POST", base+"/v1/chat/completions", body, chatHeaders)
		if resp.StatusCode != 400 || env.Error.Param == nil || *env.Error.Param != param || env.Error.Type != "invalid_request_error" {
			t.Errorf("%s: %d %+v, want 400 param %s", body, resp.StatusCode, env.Error, param)
		}
	}
	resp, env := rawRequest(t, "POST", base+"/v1/vector_stores/vs_1/search", `{"query":"q","max_num_results":51}`,
		merge(chatHeaders, map[string]string{"OpenAI-Beta": "assistants=v2"}))
	if resp.StatusCode != 400 || *env.Error.Param != "max_num_results" || env.Error.Message != "max_num_results must be at most 50" {
		t.Errorf("search: %d %+v", resp.StatusCode, env.Error)
	}
	resp, env = rawRequest(t, "GET", base+"/v1/vector_stores/vs_1/files?limit=101", "", chatHeaders)
	if resp.StatusCode != 400 || *env.Error.Param != "limit" {
		t.Errorf("list limit: %d %+v", resp.StatusCode, env.Error)
	}
	provider.mu.Lock()
	n := len(provider.requests)
	provider.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d refused requests reached the provider", n)
	}
}

func pairs17() string {
	var kv []string
	for i := 0; i < 17; i++ {
		kv = append(kv, fmt.Sprintf(`"k%d":"v"`, i))
	}
	return "{" + strings.Join(kv, ",") + "}"
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
	}`, clientKey, rec, t.TempDir()))
	small := []byte{0xff, 0xfe, 0x00, 'b', 'i', 'n'}
	upload := func(content []byte) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("purpose", "assistants")
		fw, _ := mw.CreateFormFile("file", "data.bin")
		fw.Write(content)
		mw.Close()
		resp, _ := rawRequest(t, "POST", base+"/v1/files", body.String(), map[string]string{"Authorization": "Bearer " + clientKey, "Content-Type": mw.FormDataContentType()})
		if resp.StatusCode != 200 {
			t.Fatalf("upload: %d %s", resp.StatusCode, lastBody)
		}
	}
	upload(small)
	upload(bytes.Repeat([]byte("x"), 8<<10))
	records := readRecords(t, rec, 2)

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
