package modelgate

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
)

// TestDecodeBudgetBoundsLargeBodies: a body one byte under
// decodeWeighedFrom takes nothing; one of decodeWeighedFrom takes its
// size, so that the whole budget is not to be had until that share is
// given back; work dispatched inside a holder takes nothing again; a body
// larger than the budget takes all of it; and a request whose client
// leaves while it waits is refused, holding nothing.
func TestDecodeBudgetBoundsLargeBodies(t *testing.T) {
	take := func(ctx context.Context, size int) (*request, func(), *upstreams.Error) {
		r := httptest.NewRequest("POST", "/v1/responses", nil).WithContext(ctx)
		req := &request{http: r, call: &upstreams.Call{Request: r}}
		release, err := takeDecodeBudget(req, make([]byte, size))
		return req, release, err
	}
	free := func() bool {
		if !decodeBudget.TryAcquire(decodeBudgetBytes) {
			return false
		}
		decodeBudget.Release(decodeBudgetBytes)
		return true
	}

	_, release, err := take(context.Background(), decodeWeighedFrom-1)
	if err != nil || !free() {
		t.Fatalf("a body under %d bytes took a share (%v)", decodeWeighedFrom, err)
	}
	release()

	holder, release, err := take(context.Background(), decodeWeighedFrom)
	if err != nil || free() {
		t.Fatalf("a body of %d bytes took no share (%v)", decodeWeighedFrom, err)
	}
	if _, inner, err := take(holder.http.Context(), decodeBudgetBytes); err != nil {
		t.Fatalf("work dispatched inside the holder waited: %v", err)
	} else {
		inner()
	}
	// The whole budget is not to be had while the share is held (free
	// above); a body of the whole budget gets it once the share is back.
	got := make(chan func())
	go func() {
		_, r, _ := take(context.Background(), decodeBudgetBytes)
		got <- r
	}()
	release()
	(<-got)()

	_, release, err = take(context.Background(), 2*decodeBudgetBytes)
	if err != nil || free() {
		t.Fatalf("a body over the budget did not take all of it (%v)", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := take(ctx, decodeWeighedFrom); err == nil || err.Status != statusClientClosed {
		t.Fatalf("a request whose client left while it waited: %v", err)
	}
	release()
	if !free() {
		t.Fatal("the budget was not given back whole")
	}
}
