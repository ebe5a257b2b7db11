package vectorstores

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// blockingText is a store whose full-text ranking waits for its search
// to be cancelled.
type blockingText struct {
	*store.SQLite
}

func (blockingText) SearchText(ctx context.Context, _ string, _ []string, _ []string, _ int) ([]store.ScoredChunk, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestHybridHalvesRunTogether: hybrid search ranks by text and by vector
// at once, and either half's error cancels the other and is the
// search's: here the text ranking (by the store, no index kept) waits
// until it is cancelled, which only the vector half's failure (no
// gateway to embed the question through) does; a search ranking its
// halves one after the other would wait for ever.
func TestHybridHalvesRunTogether(t *testing.T) {
	ctx := context.Background()
	s := blockingText{openSQLite(t)}
	bc := bulkFill(t, s, referenceEmbedding, 200, 100, 5)
	v := &Vectors{Model: referenceEmbedding, Ingest: NewIngester(s, s, zap.NewNop(), 1, 1), Cache: NewCache(-1)}
	_, err := v.Search(ctx, s, upstreams.Principal{Owner: "o"}, bc.storeID, &SearchRequest{}, []string{"the access code of " + bc.vaults[0]})
	var fe *FileError
	if !errors.As(err, &fe) || fe.Message != errNoGateway.Error() {
		t.Fatalf("search: %v, want the embedding's failure (%v)", err, errNoGateway)
	}
	// Cancelled with its request, a search reports the request's
	// cancellation.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	v.Ingest.Use(embedDispatcher{})
	if _, err := v.Search(cancelled, s, upstreams.Principal{Owner: "o"}, bc.storeID, &SearchRequest{}, []string{"the access code of " + bc.vaults[1]}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled search: %v, want context.Canceled", err)
	}
}
