package local

import (
	"context"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/modelgate/internal/testpg"
)

// provisionLocal provisions l the way Caddy does and cleans it up when
// the test ends.
func provisionLocal(t *testing.T, l *Local) error {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	err := l.Provision(ctx)
	t.Cleanup(func() { l.Cleanup() })
	return err
}

// TestLocalPostgresStoresByDatabase provisions several local upstreams:
// the same database (spelled directly or through a placeholder) is one
// shared store, another database another store.
func TestLocalPostgresStoresByDatabase(t *testing.T) {
	dsnA, dsnB := testpg.DSN(t), testpg.DSN(t)
	t.Setenv("MODELGATE_TEST_LOCAL_DSN", dsnA)
	a1, a2, b := &Local{Postgres: dsnA}, &Local{Postgres: "{env.MODELGATE_TEST_LOCAL_DSN}"}, &Local{Postgres: dsnB}
	for _, l := range []*Local{a1, a2, b} {
		if err := provisionLocal(t, l); err != nil {
			t.Fatal(err)
		}
	}
	if a1.store != a2.store || a1.storeKey != a2.storeKey {
		t.Fatal("two upstreams on one database opened two stores")
	}
	if refs, _ := stores.References(a1.storeKey); refs != 2 {
		t.Fatalf("the shared store has %d users, want 2", refs)
	}
	if a1.store == b.store || a1.storeKey == b.storeKey {
		t.Fatal("two databases share one store")
	}
	if strings.Contains(a1.storeKey, "@") {
		t.Fatalf("the store key %q holds the DSN", a1.storeKey)
	}
	f := putFile(t, a1.store, "alice", "assistants", []byte("a"))
	if _, err := a2.store.GetFile(t.Context(), "alice", f.ID); err != nil {
		t.Fatalf("the shared store misses the file: %v", err)
	}
	_, err := b.store.GetFile(t.Context(), "alice", f.ID)
	mustNotFound(t, "GetFile in another database", err)

	key := a1.storeKey
	a1.Cleanup()
	a2.Cleanup()
	if _, ok := stores.References(key); ok {
		t.Fatal("the store outlived its last user")
	}
}

func TestLocalRefusesPostgresMisconfigurations(t *testing.T) {
	const password = "pw-not-in-errors"
	for _, tc := range []struct {
		l    *Local
		want string
	}{
		{&Local{DataDir: t.TempDir(), Postgres: "postgres://u@127.0.0.1/db"}, "data_dir and postgres exclude each other"},
		{&Local{Postgres: "postgres://u:" + password + "@127.0.0.1:1/db?connect_timeout=5"}, "failed to connect"},
		{&Local{Postgres: "postgres://u:" + password + "@127.0.0.1:badport/db"}, "DSN is malformed"},
	} {
		err := provisionLocal(t, tc.l)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), password) {
			t.Errorf("provisioning %+v: %v; want an error with %q and no password", tc.l, err, tc.want)
		}
	}
}
