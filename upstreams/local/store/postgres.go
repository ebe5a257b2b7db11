package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// chunkSize is how much of a file's content one row of file_chunks holds:
// about what an upload or a download holds in memory at a time. The driver
// copies each row's bytes twice; at 1 MiB that garbage grew a 200 MB
// upload's peak memory by 13 MiB, at 128 KiB by 4 MiB, as fast.
const chunkSize = 128 << 10

// migrationLock is the advisory lock key that keeps instances starting
// together from migrating at once.
const migrationLock = `SELECT pg_advisory_xact_lock(8011735501)`

// Postgres keeps everything, file contents included, in PostgreSQL,
// so that several instances can share it.
type Postgres struct {
	records
	vsRecords
	// vectorsOff is why vector stores are off (no pgvector); "" when on.
	vectorsOff string
	pool       *pgxpool.Pool
	// location names the server and database, without the password.
	Location string

	mu sync.Mutex
	// uploads are the spooled contents of files not yet listed, by file
	// ID: InsertFile writes one to the database with the file's row,
	// DiscardFileContent (or the end of the upload's context) removes it.
	uploads map[string]*os.File

	// hnsw holds the dimensions (int) whose HNSW index is known to exist.
	hnsw sync.Map
	// hnswSizes are the vector stores' sizes as hnswFits counted them.
	hnswSizes hnswSizes
	// bound is the largest message the server may send a connection.
	bound *messageBound
}

// OpenPostgres connects to the database dsn names and applies pending
// migrations. Pool settings (pool_max_conns, ...) are read from the DSN;
// opts size the pool when it sets none, and bound the wait for a
// connection.
func OpenPostgres(ctx context.Context, dsn string, opts PoolOptions) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errMalformedDSN
	}
	cfg.AfterConnect = registerVector
	bound := newMessageBound()
	cfg.ConnConfig.BuildFrontend = bound.frontend
	setPoolSize(cfg, dsn, opts)
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = reachTimeout
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the connection pool: %w", err)
	}
	c := cfg.ConnConfig
	location := c.User + "@" + c.Host + ":" + strconv.Itoa(int(c.Port)) + "/" + c.Database
	if path := c.RuntimeParams["search_path"]; path != "" {
		location += "?search_path=" + path
	}
	s := &Postgres{
		records:  records{db: &sqlDB{DB: openBounded(pool, opts.Wait), dialect: postgresDialect}},
		pool:     pool,
		Location: location,
		uploads:  map[string]*os.File{},
		bound:    bound,
	}
	if err := s.reach(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w", location, err)
	}
	if err := migrate(ctx, s.db, postgresMigrations, migrationLock); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w", location, err)
	}
	if err := migrateGateway(ctx, s.db, postgresGatewayMigrations, migrationLock); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w", location, err)
	}
	if err := s.openVectorStores(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w", location, err)
	}
	return s, nil
}

// ErrUnreachable: the database server could not be reached (refused,
// timed out, unknown host), as against one that answered with an error.
var ErrUnreachable = errors.New("the database server cannot be reached")

// reachTimeout bounds the first connection at open, and the making of
// each connection (dial, TLS, startup) when the DSN sets no
// connect_timeout: the pool makes a connection apart from the call that
// asked for it (which gives up after PoolOptions.Wait), so a server that
// accepts and never answers would hold that slot of the pool for good.
const reachTimeout = 10 * time.Second

// reach opens a first connection; a failure to reach the server is
// ErrUnreachable, one the server answered (a wrong password, a missing
// database) is returned as it is.
func (s *Postgres) reach(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, reachTimeout)
	defer cancel()
	err := s.pool.Ping(ctx)
	var netErr net.Error
	if err != nil && (errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded)) {
		return fmt.Errorf("%w: %v", ErrUnreachable, err)
	}
	return err
}

// Close removes unfinished uploads' spools, then closes the pool.
func (s *Postgres) Close() error {
	s.mu.Lock()
	uploads := s.uploads
	s.uploads = map[string]*os.File{}
	s.mu.Unlock()
	for _, spool := range uploads {
		removeSpool(spool)
	}
	err := s.db.Close()
	s.pool.Close()
	if err != nil {
		return fmt.Errorf("closing %s: %w", s.Location, err)
	}
	return nil
}

// WriteFileContent spools content to a temporary file (in the system's
// temporary folder) and holds no connection meanwhile: a client sending
// slowly keeps nothing of the database's. InsertFile writes it to the
// database with the file's row, in one transaction: an upload cut short,
// refused or interrupted by a crash leaves nothing there.
func (s *Postgres) WriteFileContent(ctx context.Context, id string, content io.Reader) (int64, error) {
	spool, err := os.CreateTemp("", "modelgate-upload-")
	if err != nil {
		return 0, fmt.Errorf("spooling upload: %w", err)
	}
	n, err := io.Copy(spool, content)
	if err == nil {
		_, err = spool.Seek(0, io.SeekStart)
	}
	if err != nil {
		removeSpool(spool)
		return 0, fmt.Errorf("reading content: %w", err)
	}
	s.mu.Lock()
	s.uploads[id] = spool
	s.mu.Unlock()
	// Forget the spool when the upload's context ends without InsertFile.
	context.AfterFunc(ctx, func() { s.DiscardFileContent(id) })
	return n, nil
}

// removeSpool closes and removes an upload's spool.
func removeSpool(spool *os.File) error {
	spool.Close()
	if err := os.Remove(spool.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing an upload's spool: %w", err)
	}
	return nil
}

// takeUpload removes and returns the spool of id's content.
func (s *Postgres) takeUpload(id string) *os.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	spool := s.uploads[id]
	delete(s.uploads, id)
	return spool
}

func (s *Postgres) DiscardFileContent(id string) error {
	if spool := s.takeUpload(id); spool != nil {
		return removeSpool(spool)
	}
	return nil
}

// InsertFile writes the spooled content in chunks and lists the file, in
// one transaction that holds a connection only while it writes.
func (s *Postgres) InsertFile(ctx context.Context, f *File) error {
	spool := s.takeUpload(f.ID)
	if spool == nil {
		return fmt.Errorf("recording file %s: no content written for it, or it was discarded", f.ID)
	}
	defer removeSpool(spool)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("recording file: %w", err)
	}
	defer tx.Rollback()
	buf := make([]byte, chunkSize)
	for n := 0; ; n++ {
		k, rerr := io.ReadFull(spool, buf)
		if k > 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO file_chunks(file_id, n, data) VALUES ($1, $2, $3)`, f.ID, n, buf[:k]); err != nil {
				return fmt.Errorf("storing content: %w", err)
			}
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			break
		}
		if rerr != nil {
			return fmt.Errorf("reading the spooled content: %w", rerr)
		}
	}
	if err := s.insertFile(ctx, tx, f); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("recording file: %w", err)
	}
	return nil
}

// OpenFile reads the content a chunk at a time, each with a query of its
// own, so a slow reader holds no connection.
func (s *Postgres) OpenFile(ctx context.Context, owner, id string) (io.ReadCloser, error) {
	f, err := s.GetFile(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	return &chunkReader{ctx: ctx, db: s.db.DB, id: id, left: f.Bytes}, nil
}

// DeleteFile removes the row; its chunks go with it (ON DELETE CASCADE).
func (s *Postgres) DeleteFile(ctx context.Context, owner, id string) error {
	return s.deleteFileRow(ctx, owner, id)
}

// chunkReader reads a file's chunks in order.
type chunkReader struct {
	ctx  context.Context
	db   *sql.DB
	id   string
	next int
	buf  []byte
	left int64 // bytes not yet returned
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		if r.left <= 0 {
			return 0, io.EOF
		}
		err := r.db.QueryRowContext(r.ctx, `SELECT data FROM file_chunks WHERE file_id = $1 AND n = $2`, r.id, r.next).Scan(&r.buf)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("content of %s: chunk %d is missing (deleted while being read?)", r.id, r.next)
		}
		if err != nil {
			return 0, fmt.Errorf("reading content of %s: %w", r.id, err)
		}
		r.next++
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	r.left -= int64(n)
	return n, nil
}

func (r *chunkReader) Close() error { return nil }
