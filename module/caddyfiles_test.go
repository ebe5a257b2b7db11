package modelgate_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

// exampleKeys is the key each example Caddyfile accepts under the
// environment TestExampleCaddyfiles sets; a new example gets its line here.
var exampleKeys = map[string]string{
	"quickstart.Caddyfile": testgateway.QuickstartDevKey,
	"provider.Caddyfile":   "sk-example-key",
	"mixed.Caddyfile":      "sk-team",
	"postgres.Caddyfile":   "sk-team",
	"providers.Caddyfile":  "sk-example-key",
}

// TestExampleCaddyfiles adapts every file in caddyfiles/, provisions it and
// serves it (on free ports instead of its own): on every port it listens
// on, localhost, 127.0.0.1 and [::1] (where this machine has IPv6) all
// reach modelgate (401 without a key, 200 with one), and no /v1 request,
// whatever its host name or path, gets an empty 200.
func TestExampleCaddyfiles(t *testing.T) {
	files, err := filepath.Glob("../caddyfiles/*.Caddyfile")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example Caddyfiles found: %v", err)
	}
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.json")
	os.WriteFile(keys, []byte(`{"keys":[{"sha256":"`+gatewaytest.Sha256Hex("sk-team")+`","name":"team"}]}`), 0o600)
	t.Setenv("MODELGATE_DATA_DIR", filepath.Join(dir, "data"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "xdg")) // the built-in store's default folder
	t.Setenv("MODELGATE_KEYS_FILE", keys)
	t.Setenv("MODELGATE_KEY", "sk-example-key")
	t.Setenv("MODELGATE_CHAT_ONLY_KEY", "sk-chat-only")
	t.Setenv("OPENAI_API_KEY", "sk-provider")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-provider")
	t.Setenv("AZURE_OPENAI_ENDPOINT", "https://example.openai.azure.com")
	t.Setenv("AZURE_OPENAI_API_KEY", "azure-provider")
	t.Setenv("GEMINI_API_KEY", "gemini-provider")
	hosts := []string{"localhost", "127.0.0.1"}
	if testgateway.HasIPv6Loopback() {
		hosts = append(hosts, "[::1]")
	} else {
		t.Log("this machine has no IPv6 loopback: [::1] is not tried")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(src), "MODELGATE_POSTGRES_DSN") {
				t.Setenv("MODELGATE_POSTGRES_DSN", testpg.DSN(t))
			}
			cfg := testgateway.Adapt(t, string(src))
			if err := caddy.Validate(mustConfig(t, cfg)); err != nil {
				t.Fatalf("%s does not provision: %v", file, err)
			}
			key, ok := exampleKeys[filepath.Base(file)]
			if !ok {
				t.Fatalf("%s has no key in exampleKeys: add the key it accepts", file)
			}
			served, ports := onFreePorts(t, string(src))
			testgateway.Load(t, served)
			for _, port := range ports {
				for _, host := range hosts {
					base := fmt.Sprintf("http://%s:%d", host, port)
					if status, body := getExample(t, base+"/v1/files", "", ""); status != http.StatusUnauthorized || !gatewaytest.IsEnvelope(body) {
						t.Errorf("GET %s/v1/files without a key: %d %s, want 401 in the envelope", base, status, body)
					}
					if status, body := getExample(t, base+"/v1/files", "", key); status != http.StatusOK || !strings.Contains(body, `"object":"list"`) {
						t.Errorf("GET %s/v1/files with the key: %d %s, want 200 and the list", base, status, body)
					}
				}
				// Whatever reaches the port, under /v1, is answered: another
				// host name, an unknown path, with a key or without.
				for _, probe := range []struct{ host, path, key string }{
					{"other.example", "/v1/files", ""},
					{"other.example", "/v1/files", key},
					{"other.example", "/v1/chat/completions", key},
					{"localhost", "/v1/no-such-operation", key},
					{"localhost", "/v1/no-such-operation", ""},
				} {
					status, body := getExample(t, fmt.Sprintf("http://127.0.0.1:%d%s", port, probe.path), probe.host, probe.key)
					if status == http.StatusOK && strings.TrimSpace(body) == "" {
						t.Errorf("GET %s with Host %s (key %t): an empty 200", probe.path, probe.host, probe.key != "")
					}
					if status >= 400 && !gatewaytest.IsEnvelope(body) {
						t.Errorf("GET %s with Host %s: %d %q, not the error envelope", probe.path, probe.host, status, body)
					}
				}
			}
		})
	}
}

// onFreePorts rewrites an example to serve on free ports, without an admin
// endpoint, and returns it with the ports it listens on.
func onFreePorts(t *testing.T, src string) (string, []int) {
	t.Helper()
	moves := map[int]int{}
	var ports []int
	for _, m := range regexp.MustCompile(`:(80[0-9][0-9])\b`).FindAllStringSubmatch(src, -1) {
		old, _ := strconv.Atoi(m[1])
		if _, seen := moves[old]; seen || strings.Contains(src, "127.0.0.1:"+m[1]+"/") {
			continue // a port seen already, or an upstream's address
		}
		moves[old] = testgateway.FreePort(t)
		ports = append(ports, moves[old])
	}
	if len(ports) == 0 {
		t.Fatal("the example listens on no port of the 8000s")
	}
	served := testgateway.OnPorts(src, moves)
	quiet := "{\n\tlog {\n\t\tlevel ERROR\n\t}\n"
	if !strings.Contains(served, "admin off") {
		quiet += "\tadmin off\n"
	}
	served = strings.Replace(served, "{\n", quiet, 1)
	return served, ports
}

// getExample sends GET url, with a Host header and a bearer key when given.
func getExample(t *testing.T, url, host, key string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}
