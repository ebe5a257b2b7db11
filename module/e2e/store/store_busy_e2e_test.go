package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestBusyStoreIs503: a write that waits busy_timeout for another writer
// of the SQLite store in vain (here a connection of the test holding the
// write lock) is answered 503 store_busy with Retry-After, which clients
// retry: a conversation on the local store, and the owner of a response a
// provider made; once the writer is done the same writes pass.
func TestBusyStoreIs503(t *testing.T) {
	dir := t.TempDir()
	p := &gatewaytest.ObjectsProvider{Objects: map[string]map[string]any{}}
	provider := gatewaytest.NewFakeProvider(t, p.ServeHTTP)
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		upstream local local {
			data_dir %s
			busy_timeout 200ms
		}
		upstream provider {
			base_url %s/v1
		}
		route responses.* to provider
	}`, gatewaytest.ClientKey, dir, provider.URL))
	writes := map[string]string{"/v1/conversations": `{"metadata":{"k":"v"}}`, "/v1/responses": `{"model":"gpt-4o","input":"x"}`}
	expect := func(when string, status int, code string) {
		t.Helper()
		for path, body := range writes {
			resp, env := gatewaytest.RawRequest(t, "POST", base+path, body, gatewaytest.ChatHeaders)
			got := ""
			if env.Error.Code != nil {
				got = *env.Error.Code
			}
			if resp.StatusCode != status || got != code || (status == 503 && resp.Header.Get("Retry-After") != "1") {
				t.Fatalf("%s: %s %d %q Retry-After %q, want %d %q", when, path, resp.StatusCode, got, resp.Header.Get("Retry-After"), status, code)
			}
		}
	}
	expect("an idle store", 200, "")
	// The gateway's own writers (its batch runner's and ingester's claims)
	// may hold the write lock for a moment: the test's writer waits for
	// them, as the gateway's do, before it holds the lock itself.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "modelgate.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	expect("a busy store", 503, "store_busy")
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	expect("after the other writer", 200, "")
}
