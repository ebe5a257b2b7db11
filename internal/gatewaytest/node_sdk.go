package gatewaytest

import (
	"embed"
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
	"strings"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/internal/nodesdk"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// QuickstartWithProvider serves the quick start with responses.* and
// embeddings.create routed to a provider, and returns its base URL and a
// count of the provider's requests by the first two path segments.
func QuickstartWithProvider(t *testing.T) (string, func() map[string]int) {
	src, err := os.ReadFile(filepath.Join(testgateway.ModuleRoot(t), "caddyfiles", "quickstart.Caddyfile"))
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
		{"\tmodelgate {\n", "\tmodelgate {\n\t\tresponse_check strict\n\t\tupstream provider {\n\t\t\tbase_url " + proxy.URL + "/v1\n\t\t\tapi_key " + UpstreamKey + "\n\t\t}\n"},
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
`, backPort, UpstreamKey, t.TempDir())
	port := testgateway.FreePort(t)
	t.Setenv("MODELGATE_DATA_DIR", t.TempDir())
	testgateway.Load(t, testgateway.OnPorts(front, map[int]int{8080: port})+back)
	return fmt.Sprintf("http://localhost:%d", port), func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(reached)
	}
}

// nodeScripts are the Node scripts the SDK tests run (testdata/*.mjs).
//
//go:embed testdata/*.mjs
var nodeScripts embed.FS

// RunNodeScript runs testdata/NAME with the SDK, against base with key
// (MODELGATE_BASE_URL, ending in /v1, and MODELGATE_API_KEY), and returns
// what it printed; the script failing fails the test. The script imports
// `openai` as any user's code does: from a folder whose node_modules holds
// the SDK under that name.
func RunNodeScript(t *testing.T, sdk nodesdk.SDK, name, base, key string) string {
	t.Helper()
	return RunNodeScriptWith(t, sdk.Node, map[string]string{"openai": sdk.Package}, name, base, key)
}

// RunNodeScriptWith is RunNodeScript with the packages (import name to
// package folder) the script's node_modules holds, run by node. The
// helpers the scripts share, testdata/script_checks.mjs, go beside it.
func RunNodeScriptWith(t *testing.T, node string, packages map[string]string, name, base, key string) string {
	t.Helper()
	return RunNodeIn(t, nodesdk.Link(t, packages), node, name, base, key)
}

// RunNodeIn runs testdata/NAME with node in the folder run, which holds
// the node_modules it imports; the helpers the scripts share,
// testdata/script_checks.mjs, go beside it.
func RunNodeIn(t *testing.T, run, node, name, base, key string) string {
	t.Helper()
	files := map[string][]byte{}
	for _, file := range []string{name, "script_checks.mjs"} {
		script, err := nodeScripts.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		files[file] = script
	}
	stdout, stderr, err := nodesdk.Run(t, node, run, name, files, map[string]string{"MODELGATE_BASE_URL": base + "/v1", "MODELGATE_API_KEY": key})
	if err != nil {
		t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s\ncut streams on the dashboard:\n%s", name, err, stdout, stderr, CutStreamsShown(base))
	}
	return stdout
}

// CutStreamsShown is what the quick start's dashboard shows of relayed
// streams that ended early (each with its error), for a failure message:
// the gateway logs them at a level the tests do not print.
func CutStreamsShown(base string) string {
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
