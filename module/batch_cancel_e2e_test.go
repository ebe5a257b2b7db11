package modelgate_test

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
		io.WriteString(w, completionOfSize(300))
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
// that reach the provider after the cancel was answered. The holder
// learns of the cancel from PostgreSQL's notification, sent before the
// answer, and starts no request once it knows (those in flight are cut
// short). The provider holds each request 20 ms: in the few milliseconds
// the notification takes, each of the holder's workers can start at most
// one request, so at most concurrency (8) requests arrive after the
// answer. Before the notification, the holder learnt of a cancel at its
// next group write (outcomes are written at most 100 ms apart) or lease
// renewal, and its workers went on starting requests meanwhile.
func TestCancelThroughAnotherGatewayStopsTheHolder(t *testing.T) {
	const n, concurrency, hold = 3000, 8, 10 * time.Millisecond
	provider := newSlowProvider(t, hold)
	f := newTakeoverFixtureWith(t, n, fmt.Sprintf("upstream p openai {\n\t\t\tbase_url %s/v1\n\t\t}\n\t\troute chat.completions.create to p", provider.URL))
	client := f.other()
	cancelled, err := client.Batches.Cancel(context.Background(), f.batch.ID)
	answered := time.Now()
	if err != nil || cancelled.Status != openai.BatchStatusCancelling {
		t.Fatalf("cancel: %v", err)
	}
	done := pollBatch(t, client, f.batch.ID, openai.BatchStatusCancelled)
	checkExactlyOnce(t, client, done, n)
	late := provider.arrivedAfter(answered)
	t.Logf("%d requests reached the provider after the cancel answered (%d completed before it)", late, done.RequestCounts.Completed)
	if late > concurrency {
		t.Fatalf("%d requests reached the provider after the cancel answered; at most %d (one per worker) may", late, concurrency)
	}
	if done.RequestCounts.Completed == 0 || done.RequestCounts.Completed >= n {
		t.Fatalf("the batch was not cancelled midway: %s", done.RawJSON())
	}
}
