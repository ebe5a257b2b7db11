package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
)

// SQLite lets one writer at a time into a database, and a writer that
// finds it taken polls: at first every few milliseconds, then every
// 100 ms. Waiters that came last poll most often, so under a steady
// stream of short writes one that has waited long keeps losing the lock
// to newcomers and fails at its busy timeout while the database is far
// from saturated (8 writers holding it 3 ms each: 7 writes in 800 waited
// over 1 s where, in turn, none would wait 30 ms). The connector below
// makes this process's writers of one database take turns in the order
// they came, so SQLite's polling is left to writers of other processes.

// ErrWriterTurn: a write waited its whole busy timeout for this process's
// other writers of the SQLite database.
var ErrWriterTurn = errors.New("the store is busy: other writes of the database held it for the whole busy timeout")

// writerTurns hands the write turn of one database to one writer at a
// time, first come first served (a channel's waiting senders are served
// in order).
type writerTurns struct {
	turn chan struct{}
	wait time.Duration
	// ended hears of each write given back (the checkpointer's).
	ended func()

	// The holder, for the error of a writer that waited in vain: since
	// when, where from (the store's caller) and its last statement.
	mu     sync.Mutex
	since  time.Time
	caller [16]uintptr
	stmt   string
}

func newWriterTurns(wait time.Duration, ended func()) *writerTurns {
	return &writerTurns{turn: make(chan struct{}, 1), wait: wait, ended: ended}
}

// take waits for the turn, at most wait or until ctx ends, for a
// transaction (query "BEGIN") or the statement query.
func (w *writerTurns) take(ctx context.Context, query string) error {
	select {
	case w.turn <- struct{}{}:
		w.held(query)
		return nil
	default:
	}
	timer := time.NewTimer(w.wait)
	defer timer.Stop()
	select {
	case w.turn <- struct{}{}:
		w.held(query)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return fmt.Errorf("waited %v for the write turn (%s): %w", w.wait, w.holder(), ErrWriterTurn)
	}
}

// held notes the new holder of the turn: now, its caller outside
// database/sql and this package's connector, and its first statement.
func (w *writerTurns) held(query string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.since, w.stmt = time.Now(), query
	w.caller = [16]uintptr{}
	runtime.Callers(3, w.caller[:])
}

// ran notes the holder's latest statement.
func (w *writerTurns) ran(query string) {
	w.mu.Lock()
	w.stmt = query
	w.mu.Unlock()
}

// holder describes the holder of the turn: how long it has held it,
// the store function that took it and its latest statement (the SQL
// text only, never its arguments).
func (w *writerTurns) holder() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	where := "?"
	frames := runtime.CallersFrames(w.caller[:])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, "/upstreams/local/store.") && !strings.Contains(f.Function, "turn") {
			where = f.Function[strings.LastIndex(f.Function, "/")+1:]
			break
		}
		if !more {
			break
		}
	}
	stmt := strings.Join(strings.Fields(w.stmt), " ")
	if len(stmt) > 80 {
		stmt = stmt[:80] + "..."
	}
	return fmt.Sprintf("held %v by %s, last statement %q", time.Since(w.since).Round(time.Millisecond), where, stmt)
}

// held is one writer's turn, given back once however often it is asked.
type held struct {
	turns *writerTurns
	once  sync.Once
}

func (h *held) release() {
	h.once.Do(func() {
		<-h.turns.turn
		h.turns.ended()
	})
}

// turnConnector opens the SQLite connections of one database, each
// taking the write turn around its writes: a transaction (all of the
// store's are immediate, so they write-lock at BEGIN) from begin to
// commit or rollback, and a statement outside one that writes.
type turnConnector struct {
	driver.Connector
	turns *writerTurns
}

func (c turnConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	inner, ok := conn.(turnInner)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("the SQLite driver's connection %T lacks the context methods the store uses", conn)
	}
	return &turnConn{turnInner: inner, turns: c.turns}, nil
}

// turnInner is what the store needs of the driver's connection.
type turnInner interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.SessionResetter
	driver.Validator
}

type turnConn struct {
	turnInner
	turns *writerTurns
	// tx is the turn of the transaction open on the connection, if any:
	// its statements write within it.
	tx *held
}

func (c *turnConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *turnConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.turns.take(ctx, "BEGIN"); err != nil {
		return nil, err
	}
	h := &held{turns: c.turns}
	tx, err := c.turnInner.BeginTx(ctx, opts)
	if err != nil {
		h.release()
		return nil, err
	}
	c.tx = h
	return turnTx{Tx: tx, conn: c}, nil
}

// outside takes the turn for a statement outside a transaction that
// writes; nil when none is needed.
func (c *turnConn) outside(ctx context.Context, query string) (*held, error) {
	if c.tx != nil {
		c.turns.ran(query)
		return nil, nil
	}
	if !writes(query) {
		return nil, nil
	}
	if err := c.turns.take(ctx, query); err != nil {
		return nil, err
	}
	return &held{turns: c.turns}, nil
}

func (c *turnConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	h, err := c.outside(ctx, query)
	if err != nil {
		return nil, err
	}
	if h != nil {
		defer h.release()
	}
	return c.turnInner.ExecContext(ctx, query, args)
}

func (c *turnConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	h, err := c.outside(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := c.turnInner.QueryContext(ctx, query, args)
	if h == nil {
		return rows, err
	}
	if err != nil {
		h.release()
		return nil, err
	}
	// A statement that writes and returns rows holds the lock until its
	// rows are closed.
	return turnRows{Rows: rows, held: h}, nil
}

func (c *turnConn) Close() error {
	c.endTx()
	return c.turnInner.Close()
}

// endTx gives back the turn of the transaction open on the connection,
// if any.
func (c *turnConn) endTx() {
	if c.tx != nil {
		c.tx.release()
		c.tx = nil
	}
}

type turnTx struct {
	driver.Tx
	conn *turnConn
}

func (t turnTx) Commit() error   { defer t.conn.endTx(); return t.Tx.Commit() }
func (t turnTx) Rollback() error { defer t.conn.endTx(); return t.Tx.Rollback() }

type turnRows struct {
	driver.Rows
	held *held
}

func (r turnRows) Close() error { defer r.held.release(); return r.Rows.Close() }

// writes reports whether a statement may write: anything but a SELECT
// or a PRAGMA (the store's are the checkpoint's, which must not wait for
// writers; an EXPLAIN takes a turn it did not need, which costs a wait,
// never a wrong answer).
func writes(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n(")
	return len(q) < 6 || !strings.EqualFold(q[:6], "SELECT") && !strings.EqualFold(q[:6], "PRAGMA")
}
