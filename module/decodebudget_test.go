package modelgate

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
)

// weighing returns a body of at least decodeCountedFrom bytes whose
// decodeWeight is w (a multiple of decodedValueBytes): commas, each a
// value, padded with letters, none.
func weighing(w int64) []byte {
	body := bytes.Repeat([]byte{','}, int(w/decodedValueBytes))
	if pad := decodeCountedFrom - len(body); pad > 0 {
		body = append(body, bytes.Repeat([]byte{'a'}, pad)...)
	}
	return body
}

// TestDecodeWeightCountsValues: a body's weight is its values (string
// quotes in pairs, commas, braces) at decodedValueBytes each, whatever
// its length; under decodeCountedFrom bytes it is not counted.
func TestDecodeWeightCountsValues(t *testing.T) {
	items := bytes.Repeat([]byte(`{"role":"user","content":"a"},`), 10_000)
	for _, c := range []struct {
		name string
		body []byte
		want int64
	}{
		{"items", items, 10_000 * 7 * decodedValueBytes},
		{"a long string", append(append([]byte(`{"image":"`), bytes.Repeat([]byte{'Q'}, 8<<20)...), `"}`...), 3 * decodedValueBytes}, // a key, a string, an object
		{"under decodeCountedFrom", bytes.Repeat([]byte{','}, decodeCountedFrom-1), 0},
		{"at decodeCountedFrom", bytes.Repeat([]byte{','}, decodeCountedFrom), decodeCountedFrom * decodedValueBytes},
	} {
		if got := decodeWeight(c.body); got != c.want {
			t.Errorf("%s: weight %d, want %d", c.name, got, c.want)
		}
	}
}

// TestDecodeBudgetBoundsHeavyBodies: a body weighing one value under
// decodeWeighedFrom takes nothing, nor does an 8 MiB string; one of
// decodeWeighedFrom takes its weight, so that the whole budget is not to
// be had until that share is given back; work dispatched inside a holder
// takes nothing again; a body heavier than the budget takes all of it;
// and a request whose client leaves while it waits is refused, holding
// nothing.
func TestDecodeBudgetBoundsHeavyBodies(t *testing.T) {
	const decodeBudgetBytes = defaultDecodeBudget
	budget, berr := sharedDecodeBudget(decodeBudgetBytes)
	if berr != nil {
		t.Fatal(berr)
	}
	defer decodeBudgets.Delete(decodeBudgetKey(decodeBudgetBytes))
	take := func(ctx context.Context, body []byte) (*request, func(), *upstreams.Error) {
		r := httptest.NewRequest("POST", "/v1/responses", nil).WithContext(ctx)
		req := &request{http: r, call: &upstreams.Call{Request: r}}
		release, err := budget.take(req, body)
		return req, release, err
	}
	free := func() bool {
		if !budget.TryAcquire(decodeBudgetBytes) {
			return false
		}
		budget.Release(decodeBudgetBytes)
		return true
	}

	for name, body := range map[string][]byte{
		"a body one value under the weight": weighing(decodeWeighedFrom - decodedValueBytes),
		"an 8 MiB string":                   append(append([]byte(`"`), bytes.Repeat([]byte{'Q'}, 8<<20)...), '"'),
	} {
		_, release, err := take(context.Background(), body)
		if err != nil || !free() {
			t.Fatalf("%s took a share (%v)", name, err)
		}
		release()
	}

	holder, release, err := take(context.Background(), weighing(decodeWeighedFrom))
	if err != nil || free() {
		t.Fatalf("a body weighing %d took no share (%v)", decodeWeighedFrom, err)
	}
	if _, inner, err := take(holder.http.Context(), weighing(decodeBudgetBytes)); err != nil {
		t.Fatalf("work dispatched inside the holder waited: %v", err)
	} else {
		inner()
	}
	// The whole budget is not to be had while the share is held (free
	// above); a body of the whole budget gets it once the share is back.
	got := make(chan func())
	go func() {
		_, r, _ := take(context.Background(), weighing(decodeBudgetBytes))
		got <- r
	}()
	release()
	(<-got)()

	_, release, err = take(context.Background(), weighing(2*decodeBudgetBytes))
	if err != nil || free() {
		t.Fatalf("a body over the budget did not take all of it (%v)", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := take(ctx, weighing(decodeWeighedFrom)); err == nil || err.Status != statusClientClosed {
		t.Fatalf("a request whose client left while it waited: %v", err)
	}
	release()
	if !free() {
		t.Fatal("the budget was not given back whole")
	}
}
