package providers

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// loadLogging serves site (a site block's body) on a free port with
// Caddy's logs at WARN written to a file, and returns the base URL and
// the log file.
func loadLogging(t *testing.T, site string) (string, string) {
	t.Helper()
	logs := filepath.Join(t.TempDir(), "caddy.log")
	port := testgateway.FreePort(t)
	options := testgateway.OptionsWith(fmt.Sprintf("\tlog {\n\t\toutput file %s\n\t\tlevel WARN\n\t\tformat json\n\t}\n", logs))
	testgateway.Load(t, fmt.Sprintf("%shttp://127.0.0.1:%d {\n%s\n}\n", options, port, site))
	return fmt.Sprintf("http://127.0.0.1:%d", port), logs
}

// readLog is the log file's content so far.
func readLog(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// TestPrefixTraps: modelgate wrapped in `handle /api/*` without stripping
// the prefix is passed /api/v1/... and answers nothing (Caddy's empty
// 200), and wrapped in `handle /v1/*` never sees its dashboard or probes:
// the config's start says so, naming the matchers. Under handle_path,
// which strips the prefix, it serves the API and its dashboard, and no
// warning is logged.
func TestPrefixTraps(t *testing.T) {
	const gateway = `modelgate {
		key sk-reach
		dashboard /dashboard
	}`
	get := func(t *testing.T, url string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer sk-reach")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	t.Run("handle /api/* unstripped", func(t *testing.T) {
		base, logs := loadLogging(t, "handle /api/* {\n"+gateway+"\n}")
		if status, body := get(t, base+"/api/v1/models"); status != http.StatusOK || body != "" {
			t.Fatalf("GET /api/v1/models: %d %q; want Caddy's empty 200 (the trap)", status, body)
		}
		log := readLog(t, logs)
		if !strings.Contains(log, "modelgate will never answer here") || !strings.Contains(log, `"path_matchers":["/api/*"]`) {
			t.Fatalf("no warning naming the matcher /api/* in the log:\n%s", log)
		}
	})

	t.Run("handle /v1/*", func(t *testing.T) {
		base, logs := loadLogging(t, "handle /v1/* {\n"+gateway+"\n}")
		if status, _ := get(t, base+"/v1/models"); status != http.StatusOK {
			t.Fatalf("GET /v1/models: %d", status)
		}
		log := readLog(t, logs)
		if strings.Contains(log, "modelgate will never answer here") {
			t.Fatalf("warned that /v1 is never reached:\n%s", log)
		}
		if !strings.Contains(log, `"paths":["/livez","/readyz","/dashboard"]`) || !strings.Contains(log, `"path_matchers":["/v1/*"]`) {
			t.Fatalf("no warning naming the hidden dashboard and probes and the matcher /v1/*:\n%s", log)
		}
	})

	t.Run("handle_path /api/*", func(t *testing.T) {
		base, logs := loadLogging(t, "handle_path /api/* {\n"+gateway+"\n}")
		if status, body := get(t, base+"/api/v1/models"); status != http.StatusOK || !strings.Contains(body, `"object":"list"`) {
			t.Fatalf("GET /api/v1/models: %d %q; want the model list", status, body)
		}
		if status, body := get(t, base+"/api/dashboard"); status != http.StatusOK || !strings.Contains(body, "<html") {
			t.Fatalf("GET /api/dashboard: %d; want the dashboard", status)
		}
		if log := readLog(t, logs); strings.Contains(log, "modelgate") {
			t.Fatalf("warnings under handle_path:\n%s", log)
		}
	})
}
