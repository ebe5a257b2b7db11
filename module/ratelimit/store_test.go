package ratelimit

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
)

func TestStoreConfigOpen(t *testing.T) {
	repl := caddy.NewReplacer()
	t.Setenv("MODELGATE_TEST_STORE_ADDR", "127.0.0.1:1")
	for _, tc := range []struct {
		name    string
		cfg     *StoreConfig
		wantErr string
	}{
		{name: "none", cfg: nil},
		{name: "process", cfg: &StoreConfig{Type: "process"}},
		{name: "unknown type", cfg: &StoreConfig{Type: "etcd"}, wantErr: "type must be process or redis"},
		{name: "unknown failure mode", cfg: &StoreConfig{Type: "redis", Address: "r:6379", FailureMode: "maybe"}, wantErr: "failure_mode must be open or closed"},
		{name: "unset address", cfg: &StoreConfig{Type: "redis", Address: "{env.MODELGATE_TEST_UNSET}"}, wantErr: "needs an address"},
		{name: "negative db", cfg: &StoreConfig{Type: "redis", Address: "r:6379", DB: -1}, wantErr: "must not be negative"},
		{name: "tiny lease", cfg: &StoreConfig{Type: "redis", Address: "r:6379", LeaseTTL: caddy.Duration(time.Millisecond)}, wantErr: "too short"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.cfg.Open(repl)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || s != Process {
				t.Fatalf("%v %v, want the in-process store", s, err)
			}
		})
	}
	// Configs with the same settings (as the old and the new config of a
	// reload) share one client, closed with the last of them.
	cfg := &StoreConfig{Type: "redis", Address: "{env.MODELGATE_TEST_STORE_ADDR}", FailureMode: "closed"}
	first, err := cfg.Open(repl)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := cfg.Open(repl)
	rs := first.(*redisStore)
	if first != second || rs.address != "127.0.0.1:1" || rs.prefix != defaultPrefix || rs.timeout != defaultTimeout || rs.leaseTTL != defaultLeaseTTL || cfg.FailsOpen() {
		t.Fatalf("stores %p %p, settings %+v", first, second, rs.redisOptions)
	}
	first.Close()
	if n, ok := redisStores.References(rs.key); !ok || n != 1 {
		t.Fatalf("after one close: %d references (%v)", n, ok)
	}
	second.Close()
	if _, ok := redisStores.References(rs.key); ok {
		t.Fatal("the store outlived its last config")
	}
}
