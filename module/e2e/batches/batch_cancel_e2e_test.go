package batches

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
)

// slowProvider is an OpenAI-compatible provider that holds each chat
// completion for hold before answering it, and keeps the time each
// request arrived.
type slowProvider struct {
	*httptest.Server
	mu       sync.Mutex
	arrivals []time.Time
}

func newSlowProvider(t *testing.T, hold time.Duration) *slowProvider {
	t.Helper()
	p := &slowProvider{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.arrivals = append(p.arrivals, time.Now())
		p.mu.Unlock()
		io.Copy(io.Discard, r.Body)
		select {
		case <-time.After(hold):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, gatewaytest.CompletionOfSize(300))
	}))
	t.Cleanup(p.Close)
	return p
}

// arrivedAfter is how many requests arrived after at.
func (p *slowProvider) arrivedAfter(at time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.arrivals {
		if a.After(at) {
			n++
		}
	}
	return n
}

// TestCancelThroughAnotherGatewayStopsTheHolder cancels a running batch
// through the gateway that does not hold it and counts the requests
// that reach the provider after the cancel was answered. The cancel is
// announced (PostgreSQL NOTIFY) before it is answered, and the holder
// starts no request once the announcement reaches it (those in flight
// are cut short). The provider holds each request 20 ms, so each of the
// holder's workers (concurrency 8) has at most two requests reach the
// provider after the answer: the one it started before the holder knew,
// still on its way, and one started in the milliseconds the
// announcement takes to reach the holder's process (less than a
// request's 20 ms). Two batches are cancelled in turn, each held to the
// bound: 0 or 1 request in 8 cancels on a loaded machine. Without the
// announcement the holder learns of a cancel at its next group write
// (outcomes are written up to 100 ms apart) or lease renewal, its
// workers starting requests meanwhile: 4 runs of 4 failed (16 to 31
// requests after the answer).
func TestCancelThroughAnotherGatewayStopsTheHolder(t *testing.T) {
	const n, concurrency, hold, rounds = 3000, 8, 20 * time.Millisecond, 2
	provider := newSlowProvider(t, hold)
	f := gatewaytest.NewTakeoverFixtureWith(t, n, fmt.Sprintf("upstream p openai {\n\t\t\tbase_url %s/v1\n\t\t}\n\t\troute chat.completions.create to p", provider.URL))
	for round := range rounds {
		if round > 0 {
			f.Batch, _ = gatewaytest.RunningBatch(t, gatewaytest.SDK(f.Gateways[0].Base), n)
			if f.Holder = gatewaytest.LeaseHolder(t, f.Conn, f.Batch.ID, f.Gateways); f.Holder < 0 {
				t.Fatal("neither gateway holds the batch's lease")
			}
		}
		client := f.Other()
		cancelled, err := client.Batches.Cancel(context.Background(), f.Batch.ID)
		answered := time.Now()
		if err != nil || cancelled.Status != openai.BatchStatusCancelling {
			t.Fatalf("cancel: %v", err)
		}
		done := gatewaytest.PollBatch(t, client, f.Batch.ID, openai.BatchStatusCancelled)
		gatewaytest.CheckExactlyOnce(t, client, done, n)
		late := provider.arrivedAfter(answered)
		t.Logf("batch %d: %d requests reached the provider after the cancel answered (%d completed before it)", round+1, late, done.RequestCounts.Completed)
		if late > 2*concurrency {
			t.Fatalf("batch %d: %d requests reached the provider after the cancel answered; at most %d (two per worker) may", round+1, late, 2*concurrency)
		}
		if done.RequestCounts.Completed == 0 || done.RequestCounts.Completed >= n {
			t.Fatalf("batch %d was not cancelled midway: %s", round+1, done.RawJSON())
		}
	}
}
