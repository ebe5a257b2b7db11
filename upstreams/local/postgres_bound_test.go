package local

import (
	"context"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/modelgate/internal/testpg"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// sizedDispatcher is a gateway of the given max_body_size.
type sizedDispatcher struct {
	idleDispatcher
	limit int64
}

func (d sizedDispatcher) BodyLimit() int64 { return d.limit }

// TestSharedPostgresStoreReadsEachConfigsValues: the PostgreSQL store
// bounds the server's messages by the largest value its configs keep:
// the one that opens it by its max_body_size, and a config sharing it
// later (a reload) with a larger one raises the bound to that.
func TestSharedPostgresStoreReadsEachConfigsValues(t *testing.T) {
	dsn := testpg.DSN(t)
	for _, maxBodySize := range []int64{store.MaxDocumentText, 300 << 20} {
		l := &Local{Postgres: dsn}
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		t.Cleanup(cancel)
		err := l.Provision(ctx)
		t.Cleanup(func() { l.Cleanup() })
		if err != nil {
			t.Fatal(err)
		}
		l.UseDispatcher(sizedDispatcher{limit: maxBodySize})
		if err := l.ensureOpen(); err != nil {
			t.Fatal(err)
		}
		// A response object holds its request's fields and its output.
		got := l.store.(*store.Postgres).MaxMessageBody()
		if got < 2*maxBodySize || got > 2*maxBodySize+1<<20 {
			t.Fatalf("max_body_size %d: messages of up to %d bytes, want twice that and a row's other columns", maxBodySize, got)
		}
	}
}
