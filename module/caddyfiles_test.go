package modelgate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

// TestExampleCaddyfiles adapts every file in caddyfiles/ and provisions the
// result, so an example that stops working fails here first.
func TestExampleCaddyfiles(t *testing.T) {
	files, err := filepath.Glob("../caddyfiles/*.Caddyfile")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example Caddyfiles found: %v", err)
	}
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.json")
	os.WriteFile(keys, []byte(`{"keys":[{"sha256":"`+sha256Hex("sk-team")+`","name":"team"}]}`), 0o600)
	t.Setenv("MODELGATE_DATA_DIR", filepath.Join(dir, "data"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "xdg")) // the built-in store's default folder
	t.Setenv("MODELGATE_KEYS_FILE", keys)
	t.Setenv("MODELGATE_KEY", "sk-example-key")
	t.Setenv("MODELGATE_CHAT_ONLY_KEY", "sk-chat-only")
	t.Setenv("OPENAI_API_KEY", "sk-provider")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-provider")
	t.Setenv("AZURE_OPENAI_ENDPOINT", "https://example.openai.azure.com")
	t.Setenv("AZURE_OPENAI_API_KEY", "azure-provider")
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
		})
	}
}
