package modelgate

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// BenchmarkAuthenticateAmong1000 finds the last of 1000 configured keys:
// a map read by the presented key's digest, whatever the number of keys.
func BenchmarkAuthenticateAmong1000(b *testing.B) {
	configs := make([]KeyConfig, 1000)
	for i := range configs {
		configs[i] = KeyConfig{Key: fmt.Sprintf("sk-bench-key-%04d", i), Name: fmt.Sprintf("k%d", i)}
	}
	kr, err := newKeyring(configs, "", caddy.NewReplacer())
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest("POST", "/v1/chat/completions", nil)
	r.Header.Set("Authorization", "Bearer "+configs[len(configs)-1].Key)
	b.ReportAllocs()
	for b.Loop() {
		if p, apiErr := kr.authenticate(r); apiErr != nil || p.KeyName != "k999" {
			b.Fatal(apiErr)
		}
	}
}
