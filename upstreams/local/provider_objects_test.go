package local

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// TestProviderObjectRetention: the owner ledger of provider objects keeps
// a row provider_object_retention long (default 30 days, 720h); the sweeper the
// work starts forgets older rows at once, and every owner then gets "".
func TestProviderObjectRetention(t *testing.T) {
	var clock atomic.Int64
	clock.Store(1_800_000_000)
	saved := store.Now
	store.Now = clock.Load
	t.Cleanup(func() { store.Now = saved })
	var l Local
	if err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("local {\n data_dir " + t.TempDir() + "\n provider_object_retention 1h\n }")); err != nil {
		t.Fatal(err)
	}
	if time.Duration(l.ProviderObjectRetention) != time.Hour {
		t.Fatalf("provider_object_retention %v, want 1h", time.Duration(l.ProviderObjectRetention))
	}
	if err := provisionLocal(t, &l); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := l.RecordOwner(ctx, "response", "resp_old", "alice"); err != nil {
		t.Fatal(err)
	}
	clock.Add(3600)
	if err := l.RecordOwner(ctx, "response", "resp_new", "alice"); err != nil {
		t.Fatal(err)
	}
	clock.Add(1) // resp_old is 3601 s old, resp_new 1 s
	l.UseDispatcher(idleDispatcher{})
	if err := l.StartWork(); err != nil {
		t.Fatal(err)
	}
	forgotten := sweptSoon(func() bool { owner, err := l.OwnerOf(ctx, "response", "resp_old"); return err == nil && owner == "" })
	l.StopWork()
	if !forgotten {
		t.Fatal("the sweeper never forgot the row past the retention")
	}
	if owner, err := l.OwnerOf(ctx, "response", "resp_new"); err != nil || owner != "alice" {
		t.Fatalf("the row within the retention: %q %v", owner, err)
	}
	d := &Local{DataDir: t.TempDir()}
	if err := provisionLocal(t, d); err != nil || time.Duration(d.ProviderObjectRetention) != 30*24*time.Hour {
		t.Fatalf("default provider_object_retention %v (%v), want 720h", time.Duration(d.ProviderObjectRetention), err)
	}
}
