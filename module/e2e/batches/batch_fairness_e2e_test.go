package batches

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

// Keys of the fairness test, of two owners.
const (
	largeOwnerKey = "sk-fair-test-key-large"
	smallOwnerKey = "sk-fair-test-key-small"
)

// gate is a channel closed once.
type gate struct {
	c    chan struct{}
	once sync.Once
}

func newGate() *gate  { return &gate{c: make(chan struct{})} }
func (g *gate) open() { g.once.Do(func() { close(g.c) }) }

// largeBatch finds the large owner's batch number in a request.
var largeBatch = regexp.MustCompile(`batch=(\d+);`)

// gatedProvider answers chat completions: a request of the large owner's
// batch 1 (its content holds "batch=1;") waits for first, of its other
// batches for rest; the small owner's are answered at once.
func gatedProvider(t *testing.T) (url string, first, rest *gate) {
	first, rest = newGate(), newGate()
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if m := largeBatch.FindSubmatch(body); m != nil {
			g := rest
			if bytes.Equal(m[1], []byte("1")) {
				g = first
			}
			select {
			case <-g.c:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, gatewaytest.CompletionOfSize(300))
	}))
	t.Cleanup(provider.Close)
	t.Cleanup(func() { first.open(); rest.open() }) // before the gateway stops
	return provider.URL, first, rest
}

// TestBatchesTakeTurnsAcrossOwners: one owner queues six batches, and its
// first two take both of the runner's slots; another owner's batch,
// created after them all, runs in the first slot that frees and completes
// while the first owner's queue is still running (its second batch in
// progress, its third at most started in the slot the small one freed,
// its other three not yet run), on SQLite and on PostgreSQL.
// Taken first in, first out, it would wait for the first owner's third
// batch, held until the end: it would never complete.
func TestBatchesTakeTurnsAcrossOwners(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			where := "data_dir " + t.TempDir()
			if store == "postgres" {
				where = "postgres " + testpg.DSN(t)
			}
			url, first, rest := gatedProvider(t)
			base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s {
			owner large
		}
		key %s {
			owner small
		}
		upstream local local {
			%s
			max_batches 2
		}
		upstream p openai {
			base_url %s/v1
		}
		route chat.completions.create to p
		route files.* batches.* to local
	}`, largeOwnerKey, smallOwnerKey, where, url))
			large, small := gatewaytest.SDK(base, option.WithAPIKey(largeOwnerKey)), gatewaytest.SDK(base, option.WithAPIKey(smallOwnerKey))

			var queue []string
			for k := 1; k <= 6; k++ {
				var in strings.Builder
				for i := range 5 {
					in.WriteString(gatewaytest.ChatBatchLine(fmt.Sprintf("l%d-%d", k, i), fmt.Sprintf("batch=%d;", k)))
				}
				b, err := gatewaytest.NewBatch(large, gatewaytest.UploadBatchFile(t, large, in.String()))
				if err != nil {
					t.Fatal(err)
				}
				queue = append(queue, b.ID)
			}
			for _, id := range queue[:2] {
				gatewaytest.PollBatch(t, large, id, openai.BatchStatusInProgress)
			}
			mine, err := gatewaytest.NewBatch(small, gatewaytest.UploadBatchFile(t, small, gatewaytest.ChatBatchLine("s-0", "small")+gatewaytest.ChatBatchLine("s-1", "small")))
			if err != nil {
				t.Fatal(err)
			}
			first.open()
			if done := gatewaytest.PollBatch(t, small, mine.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed); done.Status != openai.BatchStatusCompleted || done.RequestCounts.Completed != 2 {
				t.Fatalf("the small owner's batch ended %s with %+v", done.Status, done.RequestCounts)
			}
			for i, id := range queue {
				b, err := large.Batches.Get(t.Context(), id)
				if err != nil {
					t.Fatal(err)
				}
				want := []openai.BatchStatus{openai.BatchStatusValidating}
				switch i {
				case 0:
					want = []openai.BatchStatus{openai.BatchStatusCompleted}
				case 1:
					want = []openai.BatchStatus{openai.BatchStatusInProgress}
				case 2:
					// The slot the small batch freed is woken at once and
					// may already hold it (held by the provider).
					want = append(want, openai.BatchStatusInProgress)
				}
				if !slices.Contains(want, b.Status) {
					t.Fatalf("when the small owner's batch completed, the large owner's batch %d was %s, want one of %v", i+1, b.Status, want)
				}
			}
			rest.open()
			for _, id := range queue {
				if done := gatewaytest.PollBatch(t, large, id, openai.BatchStatusCompleted, openai.BatchStatusFailed); done.Status != openai.BatchStatusCompleted {
					t.Fatalf("the large owner's batch %s ended %s", id, done.Status)
				}
			}
		})
	}
}
