package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testpg"
)

// benchItems is the size of the hostile suite's Responses items attack:
// 199,000 one-letter user messages, as a response stores them.
const benchItems = 199_000

// messageItems are n one-letter messages in their stored form, with the
// IDs id makes.
func messageItems(n int, id func() string) []ResponseItem {
	items := make([]ResponseItem, n)
	for i := range items {
		id := id()
		items[i] = ResponseItem{ID: id, Item: json.RawMessage(`{"content":[{"text":"a","type":"input_text"}],"id":"` + id + `","role":"user","status":"completed","type":"message"}`)}
	}
	return items
}

// BenchmarkCreateResponseItems stores responses of benchItems input
// items, with the IDs the gateway makes (an IDSequence) or random ones
// as a client may send: the time and allocations of a write (ns/op, B/op,
// allocs/op) and the process's CPU time (cpu-ms/op).
func BenchmarkCreateResponseItems(b *testing.B) {
	for _, ids := range []struct {
		name string
		id   func() string
	}{{"GatewayIDs", func() func() string { s := NewIDSequence(); return func() string { return s.Next("msg_") } }()},
		{"ClientIDs", func() string { return NewID("msg_") }}} {
		items := messageItems(benchItems, ids.id)
		b.Run(ids.name+"/SQLite", func(b *testing.B) { benchmarkCreateResponse(b, openBenchSQLite(b), items, nil) })
		b.Run(ids.name+"/PostgreSQL", func(b *testing.B) {
			s, err := OpenPostgres(b.Context(), testpg.DSN(b), PoolOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			benchmarkCreateResponse(b, s, items, nil)
		})
	}
}

// BenchmarkDeleteResponseItems deletes responses of benchItems input
// items with random IDs, as a client may send, each stored before
// (untimed): the time of a delete and the process's CPU time meanwhile
// (cpu-ms/op).
func BenchmarkDeleteResponseItems(b *testing.B) {
	items := messageItems(benchItems, func() string { return NewID("msg_") })
	b.Run("SQLite", func(b *testing.B) { benchmarkDeleteResponse(b, openBenchSQLite(b), items) })
	b.Run("PostgreSQL", func(b *testing.B) {
		s, err := OpenPostgres(b.Context(), testpg.DSN(b), PoolOptions{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		benchmarkDeleteResponse(b, s, items)
	})
}

// benchmarkDeleteResponse stores a response of items and deletes it, b.N
// times, the delete alone timed.
func benchmarkDeleteResponse(b *testing.B, s Store, items []ResponseItem) {
	var cpu time.Duration
	for range b.N {
		b.StopTimer()
		r := &StoredResponse{ID: NewID("resp_"), Owner: "bench", Object: json.RawMessage(`{}`)}
		if err := s.CreateResponse(context.Background(), r, items); err != nil {
			b.Fatal(err)
		}
		start := cpuTime(b)
		b.StartTimer()
		if err := s.DeleteResponse(context.Background(), r.Owner, r.ID); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuTime(b) - start
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}

// BenchmarkCreateResponseItemsLock stores responses of benchItems input
// items (gateway IDs) on SQLite while probes measure the write lock
// (lockProbes).
func BenchmarkCreateResponseItemsLock(b *testing.B) {
	items := gatewayItems(benchItems)
	s := openBenchSQLite(b)
	probes, report := lockProbes(b, s)
	benchmarkCreateResponse(b, s, items, probes)
	report()
}

// BenchmarkAddConversationItemsLock appends benchItems items (gateway
// IDs) to a conversation on SQLite, as a response stored into it does,
// while probes measure the write lock (lockProbes).
func BenchmarkAddConversationItemsLock(b *testing.B) {
	items := gatewayItems(benchItems)
	s := openBenchSQLite(b)
	c := &Conversation{ID: NewID("conv_"), Owner: "bench", Metadata: json.RawMessage(`{}`)}
	if err := s.CreateConversation(b.Context(), c, nil); err != nil {
		b.Fatal(err)
	}
	probes, report := lockProbes(b, s)
	benchmarkWrites(b, func() error { return s.AddConversationItems(context.Background(), c.Owner, c.ID, items) }, probes)
	report()
}

// lockProbes are probes measuring s's write lock, and the report of what
// they measured: the longest time it was held at once (max-hold-ms: a
// probe with no busy timeout tries to take it every 100 µs and records
// the longest run of failures) and the longest another writer waited for
// it, as the gateway's writers wait (max-wait-ms: busy_timeout, SQLite's
// busy handler polling at up to 100 ms; busy-waits counts the waits that
// passed the busy timeout, 10 s, and failed).
func lockProbes(b *testing.B, s *SQLite) (probes []func(), report func()) {
	holder, err := sql.Open("sqlite", "file:"+filepath.Join(s.space.dir, "modelgate.db")+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { holder.Close() })
	var hold, wait time.Duration
	busy := 0
	return []func(){
			func() {
				var since time.Time
				for tx, err := holder.Begin(); ; tx, err = holder.Begin() {
					if err == nil {
						if !since.IsZero() {
							hold = max(hold, time.Since(since))
						}
						since = time.Time{}
						tx.Commit()
						return
					}
					if since.IsZero() {
						since = time.Now()
					}
					time.Sleep(100 * time.Microsecond)
				}
			},
			func() {
				start := time.Now()
				tx, err := s.db.Begin()
				wait = max(wait, time.Since(start))
				switch {
				case IsBusy(err):
					busy++
				case err != nil:
					b.Error(err)
				default:
					tx.Commit()
				}
			},
		}, func() {
			b.ReportMetric(float64(hold.Microseconds())/1000, "max-hold-ms")
			b.ReportMetric(float64(wait.Microseconds())/1000, "max-wait-ms")
			b.ReportMetric(float64(busy), "busy-waits")
		}
}

// openBenchSQLite opens a store in a folder of the benchmark's.
func openBenchSQLite(b *testing.B) *SQLite {
	s, err := OpenSQLite(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// benchmarkCreateResponse stores a response of items b.N times, each
// probe running in a loop of its own meanwhile, a millisecond apart.
func benchmarkCreateResponse(b *testing.B, s Store, items []ResponseItem, probes []func()) {
	benchmarkWrites(b, func() error {
		return s.CreateResponse(context.Background(), &StoredResponse{ID: NewID("resp_"), Owner: "bench", Object: json.RawMessage(`{}`)}, items)
	}, probes)
}

// benchmarkWrites runs write b.N times, each probe running in a loop of
// its own meanwhile, a millisecond apart: the time and allocations of a
// write and the process's CPU time (cpu-ms/op), the probes stopped after.
func benchmarkWrites(b *testing.B, write func() error, probes []func()) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, probe := range probes {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				probe()
				time.Sleep(time.Millisecond)
			}
		})
	}
	b.ReportAllocs()
	cpu := cpuTime(b)
	for b.Loop() {
		if err := write(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime(b)-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
	close(stop)
	wg.Wait()
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
