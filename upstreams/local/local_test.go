package local

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/internal/testpg"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// provisionLocal provisions l the way Caddy does, opens its store as its
// start does (without the work, which needs a gateway) and cleans it up
// when the test ends.
func provisionLocal(t *testing.T, l *Local) error {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	err := l.Provision(ctx)
	t.Cleanup(func() { l.Cleanup() })
	if err != nil {
		return err
	}
	return l.ensureOpen()
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
	f := &store.File{ID: store.NewID("file-"), Owner: "alice", Filename: "f.jsonl", Purpose: "assistants", Bytes: 1, CreatedAt: store.Now()}
	if _, err := a1.store.WriteFileContent(t.Context(), f.ID, strings.NewReader("a")); err != nil {
		t.Fatal(err)
	}
	if err := a1.store.InsertFile(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	if _, err := a2.store.GetFile(t.Context(), "alice", f.ID); err != nil {
		t.Fatalf("the shared store misses the file: %v", err)
	}
	if _, err := b.store.GetFile(t.Context(), "alice", f.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetFile in another database: got %v, want ErrNotFound", err)
	}

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
		{&Local{Postgres: "postgres://u:" + password + "@127.0.0.1:badport/db"}, "DSN is malformed"},
	} {
		err := provisionLocal(t, tc.l)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), password) {
			t.Errorf("provisioning %+v: %v; want an error with %q and no password", tc.l, err, tc.want)
		}
	}
}

// TestLocalStartsWithoutAnUnreachablePostgres: a server nothing answers
// on does not fail the start; the store is reported down (not opened
// yet) while it is opened in the background, which the cleanup ends.
func TestLocalStartsWithoutAnUnreachablePostgres(t *testing.T) {
	l := &Local{Postgres: "postgres://u:pw@127.0.0.1:1/db?connect_timeout=5"}
	if err := provisionLocal(t, l); err != nil {
		t.Fatalf("provisioning with the server unreachable: %v", err)
	}
	if err := l.StoreUp(t.Context()); !errors.Is(err, errNotOpened) {
		t.Fatalf("StoreUp: %v, want errNotOpened", err)
	}
	if _, err := l.InProgress(t.Context(), 10); !errors.Is(err, errNotOpened) {
		t.Fatalf("InProgress: %v, want errNotOpened", err)
	}
}

// TestPostgresWithoutPgvectorAnswers501: where the store cannot use the
// vector extension (a server without pgvector, or with it outside the
// search_path as on the test server), the vector store operations answer
// 501 with the reason, which names it.
func TestPostgresWithoutPgvectorAnswers501(t *testing.T) {
	l := &Local{Postgres: testpg.DSN(t)}
	if err := provisionLocal(t, l); err != nil {
		t.Fatal(err)
	}
	if vs, _ := store.VectorStoreSupport(l.store); vs != nil {
		t.Skip("this server has pgvector")
	}
	_, err := l.vectorStores()
	var ue *upstreams.Error
	if !errors.As(err, &ue) || ue.Status != http.StatusNotImplemented || !strings.Contains(ue.Message, "pgvector") {
		t.Fatalf("vector store operation: %v, want a 501 naming pgvector", err)
	}
}

func TestMaxAttemptsCaddyfile(t *testing.T) {
	var l Local
	if err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("local {\n max_attempts 3\n batch_concurrency 5\n}")); err != nil || l.MaxAttempts != 3 || l.BatchConcurrency != 5 {
		t.Fatalf("%+v %v", l, err)
	}
	for _, bad := range []string{"0", "-1", "two"} {
		var l Local
		err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("local {\n max_attempts " + bad + "\n}"))
		if err == nil || !strings.Contains(err.Error(), "max_attempts must be a positive integer") {
			t.Fatalf("max_attempts %s: %v", bad, err)
		}
	}
}

func TestWorkerCountsCaddyfile(t *testing.T) {
	var l Local
	if err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("local {\n max_batches 3\n max_ingestions 1\n}")); err != nil || l.MaxBatches != 3 || l.MaxIngestions != 1 {
		t.Fatalf("%+v %v", l, err)
	}
	for _, option := range []string{"max_batches", "max_ingestions"} {
		var l Local
		err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("local {\n " + option + " 0\n}"))
		if err == nil || !strings.Contains(err.Error(), option+" must be a positive integer") {
			t.Fatalf("%s 0: %v", option, err)
		}
	}
}

// TestPoolCaddyfile reads pool_wait, refuses a negative one, and sizes
// the PostgreSQL pool from max_batches and max_ingestions when the DSN
// sets no pool_max_conns.
func TestPoolCaddyfile(t *testing.T) {
	var l Local
	if err := l.UnmarshalCaddyfile(caddyfile.NewTestDispenser("local {\n pool_wait 750ms\n}")); err != nil || time.Duration(l.PoolWait) != 750*time.Millisecond {
		t.Fatalf("%+v %v", l, err)
	}
	if err := provisionLocal(t, &Local{PoolWait: caddy.Duration(-time.Second)}); err == nil || !strings.Contains(err.Error(), "pool_wait must be positive") {
		t.Fatalf("pool_wait -1s: %v", err)
	}
	sized := &Local{Postgres: testpg.DSN(t), MaxBatches: 4, MaxIngestions: 3}
	if err := provisionLocal(t, sized); err != nil {
		t.Fatal(err)
	}
	if got, want := sized.store.(*store.Postgres).MaxConns(), store.PoolSize(4, 3); got != want || want != 26 {
		t.Fatalf("pool of %d connections, want PoolSize(4, 3) = 26", got)
	}
	if sized.PoolWait != caddy.Duration(defaultPoolWait) {
		t.Fatalf("pool_wait %v, want the default %v", time.Duration(sized.PoolWait), defaultPoolWait)
	}
}
