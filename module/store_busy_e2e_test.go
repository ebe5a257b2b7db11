package modelgate_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestBusyStoreIs503: a write that waits busy_timeout for another writer
// of the SQLite store in vain (here a connection of the test holding the
// write lock) is answered 503 store_busy with Retry-After, which clients
// retry; once the writer is done the same write passes.
func TestBusyStoreIs503(t *testing.T) {
	dir := t.TempDir()
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		upstream local local {
			data_dir %s
			busy_timeout 200ms
		}
	}`, clientKey, dir))
	write := func() (int, string, envelope) {
		resp, env := rawRequest(t, "POST", base+"/v1/conversations", `{"metadata":{"k":"v"}}`, chatHeaders)
		return resp.StatusCode, resp.Header.Get("Retry-After"), env
	}
	if status, _, _ := write(); status != 200 {
		t.Fatalf("an idle store: %d %s", status, lastBody)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "modelgate.db"))
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
	status, retry, env := write()
	if status != 503 || retry != "1" || env.Error.Code == nil || *env.Error.Code != "store_busy" || env.Error.Type != "server_error" {
		t.Fatalf("a busy store: %d Retry-After %q %s", status, retry, lastBody)
	}
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if status, _, _ := write(); status != 200 {
		t.Fatalf("after the other writer: %d %s", status, lastBody)
	}
}
