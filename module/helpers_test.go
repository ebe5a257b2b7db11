package modelgate_test

import (
	"encoding/json"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

func mustConfig(t *testing.T, raw []byte) *caddy.Config {
	t.Helper()
	var cfg caddy.Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("decoding adapted config: %v", err)
	}
	return &cfg
}
