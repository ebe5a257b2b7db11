package gateway

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// rawSocketRequest sends a request line exactly as written (Go's client
// would clean the path) and returns the status and the body.
func rawSocketRequest(t *testing.T, base, method, target string, header map[string]string) (int, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	var req strings.Builder
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", method, target, strings.TrimPrefix(base, "http://"))
	for k, v := range header {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n")
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// TestDotSegmentsNeverEscapeTheOperation: a key allowed only vector_stores.*
// must not reach files.* at the provider through dot segments, plain or
// percent-encoded, or an encoded slash; and what the provider receives is
// the path that was authorised.
func TestDotSegmentsNeverEscapeTheOperation(t *testing.T) {
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			io.WriteString(w, `{"object":"vector_store","id":"vs_1"}`)
			return
		}
		io.WriteString(w, `{"object":"vector_store.file","id":"file-abc"}`)
	})
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s {
			name vs-only
			operations vector_stores.*
		}
		upstream provider {
			base_url %s/v1
			api_key %s
		}
		route * to provider
	}`, gatewaytest.ClientKey, provider.URL, gatewaytest.UpstreamKey))
	auth := map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey}

	for _, target := range []string{
		"/v1/vector_stores/%2e%2e/files/file-abc/content",
		"/v1/vector_stores/%2E%2E/files/file-abc/content",
		"/v1/vector_stores/../files/file-abc/content",
		"/v1/vector_stores/vs_1/../../files/file-abc",
		"/v1/vector_stores/..%2Ffiles/files/file-abc",
		"/v1/vector_stores/vs_1/files/..%2f..%2ffiles%2ffile-abc",
		"/v1/vector_stores/./files/file-abc",
		"/v1/vector_stores/.%2e/files/file-abc/content",
		"/v1/vector_stores/vs%5C..%5C/files/file-abc",
		"/v1/vector_stores/vs_1%2Ffiles/files/file-abc",
	} {
		for _, method := range []string{"GET", "DELETE"} {
			status, body := rawSocketRequest(t, base, method, target, auth)
			var env gatewaytest.Envelope
			if status != http.StatusBadRequest || json.Unmarshal(body, &env) != nil ||
				env.Error.Type != "invalid_request_error" || !strings.Contains(env.Error.Message, "Invalid URL") {
				t.Errorf("%s %s: %d %s, want 400 invalid_request_error", method, target, status, body)
			}
		}
	}
	provider.Mu.Lock()
	reached := len(provider.Requests)
	provider.Mu.Unlock()
	if reached != 0 {
		req, _ := provider.Last(t)
		t.Fatalf("%d refused requests reached the provider, the last at %s", reached, req.URL.RawPath+" "+req.URL.Path)
	}

	// The authorised operation arrives as it was matched (on vs_1, which
	// the key made).
	if resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/vector_stores", "{}", map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "Content-Type": "application/json"}); resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/vector_stores: %d %s", resp.StatusCode, gatewaytest.LastBody)
	}
	target := "/v1/vector_stores/vs_1/files/file-abc"
	if status, body := rawSocketRequest(t, base, "GET", target, auth); status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, status, body)
	}
	req, _ := provider.Last(t)
	if req.URL.EscapedPath() != target || req.Method != "GET" {
		t.Fatalf("the provider received %s %s, want GET %s", req.Method, req.URL.EscapedPath(), target)
	}
	// files.* stays out of reach of this key.
	if status, _ := rawSocketRequest(t, base, "GET", "/v1/files/file-abc/content", auth); status != http.StatusForbidden {
		t.Fatalf("files.content with a vector_stores.* key: %d, want 403", status)
	}
}
