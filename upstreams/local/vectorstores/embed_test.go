package vectorstores

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
)

// refusingDispatcher answers every embeddings request 429, with the
// header given, counting the requests.
type refusingDispatcher struct {
	upstreams.Dispatcher
	header http.Header
	calls  int
}

func (d *refusingDispatcher) Dispatch(context.Context, string, upstreams.Principal, []byte) (*upstreams.Reply, error) {
	d.calls++
	return &upstreams.Reply{Status: http.StatusTooManyRequests, Header: d.header,
		Body: []byte(`{"error":{"message":"Budget used up.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)}, nil
}

// TestEmbedTakesANoRetry429AsFinal: a 429 that says not to retry (a
// budget used up) fails the embeddings at once, with its message; one
// that does not is waited out maxRateLimitWaits times first.
func TestEmbedTakesANoRetry429AsFinal(t *testing.T) {
	for _, c := range []struct {
		header http.Header
		calls  int
	}{
		{http.Header{"X-Should-Retry": {"false"}}, 1},
		{http.Header{"Retry-After-Ms": {"1"}}, maxRateLimitWaits + 1},
	} {
		d := &refusingDispatcher{header: c.header}
		_, err := embedder{dispatcher: func() upstreams.Dispatcher { return d }}.embed(context.Background(), upstreams.Principal{}, "m", []string{"x"})
		var fe *FileError
		if !errors.As(err, &fe) || !strings.Contains(fe.Message, "status 429: Budget used up.") || d.calls != c.calls {
			t.Errorf("%v: %v after %d requests, want %d", c.header, err, d.calls, c.calls)
		}
	}
}
