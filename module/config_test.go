package modelgate_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestProvisionRefusesBrokenConfigs runs Caddy's own validation (which
// provisions every module) on configs that must not start.
func TestProvisionRefusesBrokenConfigs(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "xdg")) // the built-in store's default folder, not the user's
	clearKeys := filepath.Join(dir, "clear.json")
	os.WriteFile(clearKeys, []byte(`{"keys":[{"key":"sk-in-clear"}]}`), 0o600)
	tests := []struct {
		name, block, want string
	}{
		{"no keys", ``, "no API keys configured"},
		{"unset env key", `key {env.MODELGATE_TEST_SURELY_UNSET}`, "key is empty"},
		{"openai without base_url", "key k\nupstream p {\napi_key x\n}\nroute * to p", "base_url"},
		{"bad base_url", "key k\nupstream p {\nbase_url ftp://x\n}\nroute * to p", "absolute http(s) URL"},
		{"two providers, no chat route", "key k\nupstream a {\nbase_url http://a\n}\nupstream b {\nbase_url http://b\n}\nroute files.* threads.* batches.* vector_stores.* to a", "several openai upstreams"},
		{"keys file with a clear key", "keys_file " + clearKeys, "only sha256 digests"},
		{"missing keys file", "keys_file " + filepath.Join(dir, "none.json"), "reading keys file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testgateway.Adapt(t, ":0 {\nmodelgate {\n"+tc.block+"\n}\n}\n")
			err := caddy.Validate(mustConfig(t, cfg))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestKeysFileWithDigests(t *testing.T) {
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(gatewaytest.ToolCallCompletion))
	})
	file := filepath.Join(t.TempDir(), "keys.json")
	// sha256("sk-from-keys-file")
	os.WriteFile(file, []byte(`{"keys":[{"sha256":"`+gatewaytest.Sha256Hex("sk-from-keys-file")+`","name":"filed","owner":"team-b"}]}`), 0o600)
	base := testgateway.Start(t, `
	modelgate {
		keys_file `+file+`
		upstream p {
			base_url `+provider.URL+`/v1
		}
		route * to p
	}`)
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`,
		map[string]string{"Authorization": "Bearer sk-from-keys-file", "Content-Type": "application/json"})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d with a key from the keys file", resp.StatusCode)
	}
}
