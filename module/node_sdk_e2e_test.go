package modelgate_test

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/internal/nodesdk"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// nodeSDKChecks are the checks module/testdata/node_sdk.mjs must report.
var nodeSDKChecks = []string{"chat", "chat_again_same_seed", "tools", "stream", "stream_tools", "structured_output", "files", "threads", "vector_stores", "batches", "responses", "embeddings", "errors"}

// TestNodeSDKAgainstQuickstart serves caddyfiles/quickstart.Caddyfile and
// drives it with the official openai-node SDK, unchanged (only baseURL and
// apiKey set), at each version pinned in internal/nodesdk (the current
// major and the previous one): chat with tools, streaming with the SDK's
// helpers, structured output, files, threads, vector stores, batches and
// typed errors (module/testdata/node_sdk.mjs).
func TestNodeSDKAgainstQuickstart(t *testing.T) {
	for _, sdk := range nodesdk.SDKs(t) {
		t.Run("openai-node-"+sdk.Version, func(t *testing.T) { runNodeSDK(t, sdk, testgateway.Quickstart(t, "")) })
	}
}

// TestNodeSDKThroughAProvider runs the same script against the quick start
// with responses and embeddings routed to a provider, every reply and
// stream event checked strictly: a second modelgate site serving them
// offline, behind an httptest proxy that counts what reaches it.
func TestNodeSDKThroughAProvider(t *testing.T) {
	for _, sdk := range nodesdk.SDKs(t) {
		t.Run("openai-node-"+sdk.Version, func(t *testing.T) {
			base, reached := quickstartWithProvider(t)
			runNodeSDK(t, sdk, base)
			n := reached()
			if n["/v1/responses"] < 8 || n["/v1/embeddings"] < 3 {
				t.Fatalf("the provider served %v", n)
			}
			t.Logf("the provider served %v", n)
		})
	}
}

// quickstartWithProvider serves the quick start with responses.* and
// embeddings.create routed to a provider, and returns its base URL and a
// count of the provider's requests by the first two path segments.
func quickstartWithProvider(t *testing.T) (string, func() map[string]int) {
	src, err := os.ReadFile(filepath.Join("..", "caddyfiles", "quickstart.Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	backPort := testgateway.FreePort(t)
	target, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", backPort))
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	var mu sync.Mutex
	reached := map[string]int{}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.SplitN(r.URL.Path, "/", 4)
		mu.Lock()
		reached[strings.Join(parts[:min(3, len(parts))], "/")]++
		mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	front := string(src)
	for _, r := range [][2]string{
		{"route chat.completions.create embeddings.create to reference", "route chat.completions.create to reference\n\t\troute responses.* embeddings.create to provider"},
		{"route files.* threads.* vector_stores.* batches.* responses.* to local", "route files.* threads.* vector_stores.* batches.* to local"},
		{"\tmodelgate {\n", "\tmodelgate {\n\t\tresponse_check strict\n\t\tupstream provider {\n\t\t\tbase_url " + proxy.URL + "/v1\n\t\t\tapi_key " + upstreamKey + "\n\t\t}\n"},
	} {
		if !strings.Contains(front, r[0]) {
			t.Fatalf("the quick start no longer says %q", r[0])
		}
		front = strings.Replace(front, r[0], r[1], 1)
	}
	back := fmt.Sprintf(`
http://127.0.0.1:%d {
	modelgate {
		key %s {
			owner provider
		}
		upstream local local {
			data_dir %s
		}
		route chat.completions.create embeddings.create to reference
		route responses.* to local
	}
}
`, backPort, upstreamKey, t.TempDir())
	port := testgateway.FreePort(t)
	t.Setenv("MODELGATE_DATA_DIR", t.TempDir())
	testgateway.Load(t, testgateway.OnPorts(front, map[int]int{8080: port})+back)
	return fmt.Sprintf("http://localhost:%d", port), func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(reached)
	}
}

// runNodeSDK runs the script with sdk against base, a quick start of its
// own, so that what one SDK's run leaves in the store does not show in the
// other's listings.
func runNodeSDK(t *testing.T, sdk nodesdk.SDK, base string) {
	stdout := runNodeScript(t, sdk, "node_sdk.mjs", base, testgateway.QuickstartDevKey)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var summary struct {
		SDK    string   `json:"sdk"`
		Checks []string `json:"checks"`
		Errors struct {
			Unauthorized int `json:"unauthorized"`
			Limit        struct {
				Status int    `json:"status"`
				Param  string `json:"param"`
			} `json:"limit"`
		} `json:"errors"`
		Chat struct {
			Content string `json:"content"`
		} `json:"chat"`
		Tools struct {
			Arguments map[string]any `json:"arguments"`
		} `json:"tools"`
		Batches struct {
			Lines int `json:"lines"`
		} `json:"batches"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &summary); err != nil {
		t.Fatalf("the script's last line is no JSON summary: %v\n%s", err, stdout)
	}
	if summary.SDK != sdk.Version {
		t.Fatalf("the script ran openai-node %s, want the pinned %s", summary.SDK, sdk.Version)
	}
	if !slices.Equal(summary.Checks, nodeSDKChecks) {
		t.Fatalf("checks run %v, want %v", summary.Checks, nodeSDKChecks)
	}
	if summary.Errors.Unauthorized != 401 || summary.Errors.Limit.Status != 400 || summary.Errors.Limit.Param != "metadata" {
		t.Fatalf("errors summary %+v", summary.Errors)
	}
	if summary.Chat.Content == "" || summary.Tools.Arguments["city"] == nil || summary.Batches.Lines != 4 {
		t.Fatalf("summary %s", lines[len(lines)-1])
	}
	t.Logf("openai-node %s on %s passed %d checks against the quick start", summary.SDK, sdk.Node, len(summary.Checks))
}

// runNodeScript runs testdata/NAME with the SDK, against base with key
// (MODELGATE_BASE_URL, ending in /v1, and MODELGATE_API_KEY), and returns
// what it printed; the script failing fails the test. The script imports
// `openai` as any user's code does: from a folder whose node_modules holds
// the SDK under that name.
func runNodeScript(t *testing.T, sdk nodesdk.SDK, name, base, key string) string {
	t.Helper()
	return runNodeScriptWith(t, sdk.Node, map[string]string{"openai": sdk.Package}, name, base, key)
}

// runNodeScriptWith is runNodeScript with the packages (import name to
// package folder) the script's node_modules holds, run by node. The
// helpers the scripts share, testdata/script_checks.mjs, go beside it.
func runNodeScriptWith(t *testing.T, node string, packages map[string]string, name, base, key string) string {
	t.Helper()
	return runNodeIn(t, nodesdk.Link(t, packages), node, name, base, key)
}

// runNodeIn runs testdata/NAME with node in the folder run, which holds
// the node_modules it imports; the helpers the scripts share,
// testdata/script_checks.mjs, go beside it.
func runNodeIn(t *testing.T, run, node, name, base, key string) string {
	t.Helper()
	files := map[string][]byte{}
	for _, file := range []string{name, "script_checks.mjs"} {
		script, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		files[file] = script
	}
	stdout, stderr, err := nodesdk.Run(t, node, run, name, files, map[string]string{"MODELGATE_BASE_URL": base + "/v1", "MODELGATE_API_KEY": key})
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s\ncut streams on the dashboard:\n%s", name, err, stdout, stderr, cutStreamsShown(base))
	}
	return stdout
}

// cutStreamsShown is what the quick start's dashboard shows of relayed
// streams that ended early (each with its error), for a failure message:
// the gateway logs them at a level the tests do not print.
func cutStreamsShown(base string) string {
	resp, err := http.Get(base + "/dashboard")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	var shown []string
	for _, line := range strings.Split(html.UnescapeString(string(page)), "\n") {
		if strings.Contains(line, "ended early") {
			shown = append(shown, strings.TrimSpace(line))
		}
	}
	return strings.Join(shown, "\n")
}
