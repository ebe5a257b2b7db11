package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
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
	// uploads are the open transactions of contents written and not yet
	// listed, by file ID: InsertFile commits one, DiscardFileContent (or
	// the end of the upload's context) rolls it back.
	uploads map[string]*sql.Tx
}

// OpenPostgres connects to the database dsn names and applies pending
// migrations. Pool settings (pool_max_conns, ...) are read from the DSN.
func OpenPostgres(ctx context.Context, dsn string) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errMalformedDSN
	}
	cfg.AfterConnect = registerVector
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
		records:  records{db: &sqlDB{DB: stdlib.OpenDBFromPool(pool), dialect: postgresDialect}},
		pool:     pool,
		Location: location,
		uploads:  map[string]*sql.Tx{},
	}
	if err := s.reach(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w", location, err)
	}
	if err := migrate(ctx, s.db, postgresMigrations, migrationLock); err != nil {
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

// reachTimeout bounds the first connection at open.
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

// Close rolls back unfinished uploads, whose connections the pool would
// otherwise wait for, then closes the pool.
func (s *Postgres) Close() error {
	s.mu.Lock()
	uploads := s.uploads
	s.uploads = map[string]*sql.Tx{}
	s.mu.Unlock()
	for _, tx := range uploads {
		tx.Rollback()
	}
	err := s.db.Close()
	s.pool.Close()
	if err != nil {
		return fmt.Errorf("closing %s: %w", s.Location, err)
	}
	return nil
}

// WriteFileContent streams content into chunks inside a transaction that
// stays open until InsertFile commits it with the file's row: an upload
// cut short, refused or interrupted by a crash is rolled back whole.
func (s *Postgres) WriteFileContent(ctx context.Context, id string, content io.Reader) (int64, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("starting upload: %w", err)
	}
	buf := make([]byte, chunkSize)
	var total int64
	for n := 0; ; n++ {
		k, rerr := io.ReadFull(content, buf)
		if k > 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO file_chunks(file_id, n, data) VALUES ($1, $2, $3)`, id, n, buf[:k]); err != nil {
				tx.Rollback()
				return 0, fmt.Errorf("storing content: %w", err)
			}
			total += int64(k)
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			break
		}
		if rerr != nil {
			tx.Rollback()
			return 0, fmt.Errorf("reading content: %w", rerr)
		}
	}
	s.mu.Lock()
	s.uploads[id] = tx
	s.mu.Unlock()
	// database/sql rolls the transaction back when ctx ends; forget it then.
	context.AfterFunc(ctx, func() { s.takeUpload(id) })
	return total, nil
}

// takeUpload removes and returns the open transaction of id's content.
func (s *Postgres) takeUpload(id string) *sql.Tx {
	s.mu.Lock()
	defer s.mu.Unlock()
	tx := s.uploads[id]
	delete(s.uploads, id)
	return tx
}

func (s *Postgres) DiscardFileContent(id string) error {
	tx := s.takeUpload(id)
	if tx == nil {
		return nil
	}
	if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		return fmt.Errorf("discarding content: %w", err)
	}
	return nil
}

// InsertFile lists the file and commits its content with it.
func (s *Postgres) InsertFile(ctx context.Context, f *File) error {
	tx := s.takeUpload(f.ID)
	if tx == nil {
		return fmt.Errorf("recording file %s: no content written for it, or it was discarded", f.ID)
	}
	defer tx.Rollback()
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
