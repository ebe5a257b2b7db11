package gateway

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestSecretsStayOutOfDebugLogs runs Caddy at DEBUG with a client key
// written in clear, a client key and a provider key given as placeholders,
// serves a request with each key, and finds none of the secrets in
// anything Caddy logged, "adjusted config" included.
func TestSecretsStayOutOfDebugLogs(t *testing.T) {
	const literalKey = "sk-literal-client-key-7731"
	const envKey = "sk-client-key-from-env-5432"
	const providerKey = "sk-provider-key-from-env-9876"
	t.Setenv("MG_TEST_CLIENT_KEY", envKey)
	t.Setenv("MG_TEST_PROVIDER_KEY", providerKey)
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, gatewaytest.ToolCallCompletion)
	})
	logPath := filepath.Join(t.TempDir(), "caddy.log")
	port := testgateway.FreePort(t)
	testgateway.Load(t, fmt.Sprintf(`{
	admin off
	persist_config off
	grace_period 1ns
	log {
		output file %s
		level DEBUG
	}
}
http://127.0.0.1:%d {
	modelgate {
		key %s {
			name literal
		}
		key {env.MG_TEST_CLIENT_KEY} {
			name from-env
		}
		upstream p {
			base_url %s/v1
			api_key {env.MG_TEST_PROVIDER_KEY}
		}
	}
}
`, logPath, port, literalKey, provider.URL))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for _, key := range []string{literalKey, envKey} {
		resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", gatewaytest.ChatJSON,
			map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"})
		if resp.StatusCode != 200 {
			t.Fatalf("chat with %s: %d %s", key[:12], resp.StatusCode, gatewaytest.LastBody)
		}
	}
	if req, _ := provider.Last(t); req.Header.Get("Authorization") != "Bearer "+providerKey {
		t.Fatalf("the provider got %q", req.Header.Get("Authorization"))
	}
	logged, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logged), "adjusted config") || !strings.Contains(string(logged), "modelgate") {
		t.Fatalf("Caddy's DEBUG config line was not logged:\n%.2000s", logged)
	}
	for _, secret := range []string{literalKey, envKey, providerKey} {
		if strings.Contains(string(logged), secret) {
			t.Errorf("the DEBUG log holds %s", secret)
		}
	}
}

// TestRecordsRedactSecrets: through the gateway, the secrets of a
// request's headers reach the record as [redacted], the provider's
// cookies neither the client nor the record, and the other headers as
// they were.
func TestRecordsRedactSecrets(t *testing.T) {
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Add("Set-Cookie", "session=upstream-secret-1")
		w.Header().Add("Set-Cookie", "other=upstream-secret-2")
		w.Header().Set("X-Request-Id", "kept")
		io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"gpt-4o","choices":[]}`)
	})
	path := filepath.Join(t.TempDir(), "r.jsonl")
	base := gatewaytest.CheckGateway(t, provider.URL, "off", path)
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", gatewaytest.ChatJSON, map[string]string{
		"Authorization": "Bearer " + gatewaytest.ClientKey, "Content-Type": "application/json",
		"X-Api-Key": "client-secret-1", "Cookie": "c=client-secret-2", "Proxy-Authorization": "Basic client-secret-3",
		"X-Client-Note": "kept",
	})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	rec := gatewaytest.ReadRecords(t, path, 1)[0]
	header := func(part, name string) string {
		values, _ := rec[part].(map[string]any)["header"].(map[string]any)[name].([]any)
		var out []string
		for _, v := range values {
			out = append(out, v.(string))
		}
		return strings.Join(out, ",")
	}
	for _, name := range []string{"Authorization", "X-Api-Key", "Cookie", "Proxy-Authorization"} {
		if got := header("request", name); got != "[redacted]" {
			t.Errorf("request %s recorded as %q", name, got)
		}
	}
	if got := header("response", "Set-Cookie"); got != "" {
		t.Errorf("response Set-Cookie recorded as %q: the provider's cookies are not relayed", got)
	}
	if header("request", "X-Client-Note") != "kept" || header("response", "X-Request-Id") != "kept" ||
		header("request", "Content-Type") != "application/json" {
		t.Errorf("other headers not recorded as sent: %v", rec)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{gatewaytest.ClientKey, "client-secret", "upstream-secret"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("record holds %q: %s", secret, data)
		}
	}
}
