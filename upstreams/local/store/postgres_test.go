package store

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/modelgate/modelgate/internal/testpg"
)

// openTestPostgres opens a store on dsn, closed when the test ends.
func openTestPostgres(t *testing.T, dsn string) *Postgres {
	t.Helper()
	s, err := OpenPostgres(t.Context(), dsn, PoolOptions{})
	if err != nil {
		t.Fatalf("opening PostgreSQL store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPostgresStore(t *testing.T) {
	dsn := testpg.DSN(t)
	testStore(t, storeLocation{
		open: func(t *testing.T) Store { return openTestPostgres(t, dsn) },
		contents: func(t *testing.T, s Store) int {
			var n int
			if err := s.(*Postgres).db.QueryRowContext(t.Context(), `SELECT COUNT(DISTINCT file_id) FROM file_chunks`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		},
	})
}

func TestPostgresBatchStore(t *testing.T) {
	testBatchStore(t, func(t *testing.T) func(t *testing.T) Store {
		dsn := testpg.DSN(t)
		return func(t *testing.T) Store { return openTestPostgres(t, dsn) }
	})
}

// TestPostgresConcurrentStarts opens several stores at once on an empty
// schema: the advisory lock lets one migrate while the others wait.
func TestPostgresConcurrentStarts(t *testing.T) {
	dsn := testpg.DSN(t)
	const instances = 4
	var wg sync.WaitGroup
	errs := make([]error, instances)
	for i := range instances {
		wg.Go(func() {
			s, err := OpenPostgres(t.Context(), dsn, PoolOptions{})
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("instance %d: %v", i, err)
		}
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var versions, latest int
	if err := conn.QueryRow(context.Background(), `SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&versions, &latest); err != nil {
		t.Fatal(err)
	}
	if versions != len(postgresMigrations) || latest != len(postgresMigrations) {
		t.Fatalf("schema_migrations holds %d versions up to %d, want each of 1..%d once", versions, latest, len(postgresMigrations))
	}
}

// TestPostgresErrorsHideThePassword fails to connect and to parse with a
// password in the DSN; neither error quotes it.
func TestPostgresErrorsHideThePassword(t *testing.T) {
	const password = "pw-that-must-not-leak"
	for _, dsn := range []string{
		"postgres://modelgate:" + password + "@127.0.0.1:1/modelgate?sslmode=disable&connect_timeout=5",
		"postgres://modelgate:" + password + "@127.0.0.1:notaport/modelgate",
		"host=127.0.0.1 port=1 user=modelgate password=" + password + " dbname=modelgate connect_timeout=5",
		"host=127.0.0.1 password='" + password,
	} {
		_, err := OpenPostgres(t.Context(), dsn, PoolOptions{})
		if err == nil {
			t.Fatalf("opening %q succeeded", dsn)
		}
		t.Log(err)
		if strings.Contains(err.Error(), password) {
			t.Errorf("the error quotes the password: %v", err)
		}
	}
}

func TestPostgresVectorStoreStore(t *testing.T) {
	dsn := testpg.VectorDSN(t)
	testVectorStoreStore(t, func(t *testing.T) vectorStoreStore {
		s := openTestPostgres(t, dsn)
		if s.vectorsOff != "" {
			t.Fatalf("vector stores are off: %s", s.vectorsOff)
		}
		return s
	})
}

// TestPostgresWithoutPgvector opens the store where it cannot use the
// vector extension (a server without pgvector, or, as on the test server,
// with it in a schema outside the search_path): files and threads work,
// and vector stores are off with a reason naming it (which their
// operations answer 501 with: TestPostgresWithoutPgvectorAnswers501).
func TestPostgresWithoutPgvector(t *testing.T) {
	s := openTestPostgres(t, testpg.DSN(t))
	var available bool
	if err := s.db.QueryRowContext(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')`).Scan(&available); err != nil {
		t.Fatal(err)
	}
	want := "lacks the vector extension (pgvector)"
	if available {
		want = "the vector extension (pgvector) is in a schema outside the search_path"
	}
	if !strings.Contains(s.vectorsOff, want) {
		t.Fatalf("vector stores off for %q, want %q", s.vectorsOff, want)
	}
	putFile(t, s, "o", "assistants", []byte("still works"))
}

// TestClockSkewIsWarnedOf: an instance whose clock agrees with the
// database's (same host here) starts quietly; one an hour ahead is
// measured as such and warned of.
func TestClockSkewIsWarnedOf(t *testing.T) {
	s := openTestPostgres(t, testpg.DSN(t))
	core, logs := observer.New(zap.WarnLevel)
	s.WarnOfClockSkew(t.Context(), time.Now, zap.New(core))
	if n := logs.Len(); n != 0 {
		t.Fatalf("same clock: %d warnings: %v", n, logs.All())
	}
	ahead := func() time.Time { return time.Now().Add(time.Hour) }
	skew, err := s.clockSkew(t.Context(), ahead)
	if err != nil || (skew-time.Hour).Abs() > maxClockSkew {
		t.Fatalf("an hour ahead measured as %v, %v", skew, err)
	}
	s.WarnOfClockSkew(t.Context(), ahead, zap.New(core))
	warnings := logs.FilterMessageSnippet("clock").All()
	if len(warnings) != 1 {
		t.Fatalf("an hour ahead: warnings %v", logs.All())
	}
	if got := warnings[0].ContextMap()["ahead_of_database"]; got == nil {
		t.Fatalf("the warning does not say by how much: %v", warnings[0].ContextMap())
	}
}
