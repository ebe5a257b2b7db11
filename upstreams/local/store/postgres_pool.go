package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// PoolOptions size the PostgreSQL store's connection pool.
type PoolOptions struct {
	// MaxConns is the pool's size when the DSN sets no pool_max_conns.
	MaxConns int32
	// Wait bounds how long a store call waits for a free connection
	// before it fails with ErrBusy.
	Wait time.Duration
}

// PoolSize is the pool a workload needs: each running batch holds up to
// three connections at a time (its group writer, its page reads, its
// lease renewal), each ingestion two, and requests served from the store
// one each while their statement runs (uploads are spooled first, so
// none holds one while its client sends): 8 for those.
func PoolSize(maxBatches, maxIngestions int) int32 {
	return int32(3*maxBatches + 2*maxIngestions + 8)
}

// MaxConns is how many connections the store's pool holds at most.
func (s *Postgres) MaxConns() int32 { return s.pool.Stat().MaxConns() }

// ErrBusy: every connection of the pool stayed in use for as long as a
// call may wait for one. The store answers; it is overloaded.
var ErrBusy = errors.New("the store is busy: no database connection came free in time")

// setPoolSize applies opts.MaxConns unless the DSN sets pool_max_conns.
func setPoolSize(cfg *pgxpool.Config, dsn string, opts PoolOptions) {
	c, err := pgconn.ParseConfig(dsn)
	if err == nil && c.RuntimeParams["pool_max_conns"] == "" && opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
}

// boundedConnector hands database/sql the pool's connections, waiting at
// most wait for one: a call that finds every connection in use for that
// long fails with ErrBusy instead of queueing behind them.
type boundedConnector struct {
	driver.Connector
	pool *pgxpool.Pool
	wait time.Duration
}

func (c boundedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if c.wait <= 0 {
		return c.Connector.Connect(ctx)
	}
	wctx, cancel := context.WithTimeout(ctx, c.wait)
	defer cancel()
	conn, err := c.Connector.Connect(wctx)
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		if st := c.pool.Stat(); st.AcquiredConns() >= st.MaxConns() {
			return nil, fmt.Errorf("%w (%d connections, waited %v)", ErrBusy, st.MaxConns(), c.wait)
		}
	}
	return conn, err
}

// openBounded is database/sql over the pool, each connection waited for
// at most wait.
func openBounded(pool *pgxpool.Pool, wait time.Duration) *sql.DB {
	db := sql.OpenDB(boundedConnector{Connector: stdlib.GetPoolConnector(pool), pool: pool, wait: wait})
	// As stdlib.OpenDBFromPool: the pool keeps the idle connections.
	db.SetMaxIdleConns(0)
	return db
}
