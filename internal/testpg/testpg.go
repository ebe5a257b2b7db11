// Package testpg hands tests a schema of their own on the PostgreSQL
// server scripts/services/postgres.sh started, with pgvector as
// scripts/services/pgvector.sh creates it there (scripts/test.sh runs both).
package testpg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/modelgate/modelgate/internal/testservice"
)

// DSN returns a connection string for a new, empty schema on the server
// in MODELGATE_TEST_POSTGRES_DSN; the schema is dropped when the test ends.
// Without the variable the test is skipped, unless
// MODELGATE_REQUIRE_SERVICES=1 (as scripts/test.sh and CI set), where a
// missing PostgreSQL fails it.
func DSN(t testing.TB) string {
	t.Helper()
	base := testservice.Env(t, "MODELGATE_TEST_POSTGRES_DSN", "PostgreSQL", "scripts/services/postgres.sh")
	return withSearchPath(t, base, newSchema(t, base))
}

// VectorDSN is DSN on the PostgreSQL with pgvector in
// MODELGATE_TEST_PGVECTOR_DSN (scripts/services/pgvector.sh): the vector
// extension is in the public schema, which the search path of the new
// schema ends with (DSN's leaves it out, so stores there find vector
// stores off).
func VectorDSN(t testing.TB) string {
	t.Helper()
	base := testservice.Env(t, "MODELGATE_TEST_PGVECTOR_DSN", "PostgreSQL with pgvector", "scripts/services/pgvector.sh")
	Exec(t, base, `CREATE EXTENSION IF NOT EXISTS vector SCHEMA public`)
	return withSearchPath(t, base, newSchema(t, base)+",public")
}

// newSchema creates a schema of a random name, dropped when the test ends.
func newSchema(t testing.TB, base string) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	schema := "test_" + hex.EncodeToString(b)
	Exec(t, base, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { Exec(t, base, `DROP SCHEMA `+schema+` CASCADE`) })
	return schema
}

// withSearchPath returns dsn with its search_path set to path.
func withSearchPath(t testing.TB, dsn, path string) string {
	t.Helper()
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " search_path=" + path
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("the test DSN is not a URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", path)
	u.RawQuery = q.Encode()
	return u.String()
}

// Exec runs one statement on its own connection.
func Exec(t testing.TB, dsn, stmt string) {
	t.Helper()
	ctx := context.Background()
	conn := connect(t, dsn)
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// connect opens a connection of its own to the test server.
func connect(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connecting to the test PostgreSQL: %v", err)
	}
	return conn
}
