package store

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// maxClockSkew is how far an instance's clock may be from the database's
// before the start warns. Batch and ingestion leases are written and
// compared in instance time (whole seconds, 30 s by default, renewed
// every third of that), so instances whose clocks disagree by more than
// a few seconds can take over each other's work early.
const maxClockSkew = time.Second

// clockSkew is how far local is ahead of the PostgreSQL server's clock
// (negative: behind), read in one round trip and compared at its middle.
func (s *Postgres) clockSkew(ctx context.Context, local func() time.Time) (time.Duration, error) {
	before := local()
	var epoch float64
	if err := s.db.QueryRowContext(ctx, `SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8`).Scan(&epoch); err != nil {
		return 0, fmt.Errorf("reading the database's clock: %w", err)
	}
	after := local()
	mid := before.Add(after.Sub(before) / 2)
	server := time.Unix(0, int64(epoch*float64(time.Second)))
	return mid.Sub(server), nil
}

// WarnOfClockSkew logs a warning when local is more than maxClockSkew from
// the database's clock, or when that cannot be read.
func (s *Postgres) WarnOfClockSkew(ctx context.Context, local func() time.Time, logger *zap.Logger) {
	if skew, err := s.clockSkew(ctx, local); err != nil || skew.Abs() > maxClockSkew {
		logger.Warn("this instance's clock may differ from the database's: instances sharing the database lease batches and ingestion by their own clocks, so keep them synchronised (NTP)",
			zap.Duration("ahead_of_database", skew), zap.Error(err))
	}
}
