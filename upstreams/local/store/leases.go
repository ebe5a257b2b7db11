package store

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Batches and vector store ingestion are leased to one worker at a time
// (see ClaimBatch and ClaimIngestions): a worker renews its leases while
// it works, and what a dead worker held is taken up by another once the
// leases have run out.

// WorkerName names a worker in the leases it holds: unique across
// instances and restarts, and readable in the database.
func WorkerName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), NewID("")[:8])
}

// leaseEndFrom is a leased row's lease end as a worker that asks at now
// waits for it (two parameters: now, now): a lease that has run out by
// now counts as ending now, since the claim at now that passed it over
// (it ran out meanwhile, or a statement under way held the row) is to be
// tried again within a second, not at the idle poll (see IdleWait).
const leaseEndFrom = `CASE WHEN lease_until < ? THEN ? ELSE lease_until END`

// LeaseEnd is when a lease of length lease taken or renewed now runs out,
// in Unix seconds (rounded up).
func LeaseEnd(lease time.Duration) int64 {
	return Now() + int64((lease+time.Second-1)/time.Second)
}

// RenewEvery calls renew every interval until ctx ends or renew reports
// false (the lease is lost).
func RenewEvery(ctx context.Context, interval time.Duration, renew func() bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !renew() {
			return
		}
	}
}
