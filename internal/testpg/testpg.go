// Package testpg hands tests a schema of their own on the PostgreSQL
// server scripts/services/postgres.sh started (scripts/test.sh runs it).
package testpg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// DSN returns a connection string for a new, empty schema on the server
// in MODELGATE_TEST_POSTGRES_DSN; the schema is dropped when the test ends.
// Without the variable the test is skipped, unless
// MODELGATE_REQUIRE_SERVICES=1 (as scripts/test.sh and CI set), where a
// missing PostgreSQL fails it.
func DSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv("MODELGATE_TEST_POSTGRES_DSN")
	if base == "" {
		if os.Getenv("MODELGATE_REQUIRE_SERVICES") == "1" {
			t.Fatal("MODELGATE_TEST_POSTGRES_DSN is unset but MODELGATE_REQUIRE_SERVICES=1: start PostgreSQL with `eval \"$(bash scripts/services/postgres.sh)\"` or run scripts/test.sh")
		}
		t.Skip("no PostgreSQL: set MODELGATE_TEST_POSTGRES_DSN (see scripts/services/postgres.sh) or run scripts/test.sh")
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	schema := "test_" + hex.EncodeToString(b)
	exec(t, base, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { exec(t, base, `DROP SCHEMA `+schema+` CASCADE`) })
	return withSearchPath(t, base, schema)
}

// withSearchPath returns dsn with its search_path set to schema.
func withSearchPath(t testing.TB, dsn, schema string) string {
	t.Helper()
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " search_path=" + schema
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("MODELGATE_TEST_POSTGRES_DSN is not a URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// exec runs one statement on its own connection.
func exec(t testing.TB, dsn, stmt string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting to the test PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}
