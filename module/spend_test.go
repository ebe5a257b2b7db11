package modelgate

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/modelgate/modelgate/module/pricing"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// failingSpendStore refuses every write, then takes them.
type failingSpendStore struct {
	store.GatewayStore
	fail    bool
	written []store.SpendRow
}

func (f *failingSpendStore) AddSpend(_ context.Context, rows []store.SpendRow) error {
	if f.fail {
		return errors.New("down")
	}
	f.written = append(f.written, rows...)
	return nil
}

// TestSpendLogBounds: past maxSpendCells sums, the unpriced replies of new
// models (the client's model names) are summed as one "(other)" model, so
// what is held between two writes is bounded; a failed write holds the
// sums for the next, which writes each exactly once.
func TestSpendLogBounds(t *testing.T) {
	var log spendLog
	who := upstreams.Principal{KeyName: "k", Owner: "o"}
	row := &pricing.Row{Model: "priced-model"}
	unpriced := func(model string) *request {
		return &request{call: &upstreams.Call{Principal: who, Model: model}, upstream: "u", cost: exchangeCost{priced: true, unpriced: true}}
	}
	for i := range maxSpendCells + 10 {
		log.add(unpriced(fmt.Sprintf("model-%d", i)))
	}
	log.add(&request{call: &upstreams.Call{Principal: who, Model: "alias"}, upstream: "u", cost: exchangeCost{priced: true, pico: 7, row: row}})
	if n := len(log.pending); n != maxSpendCells+1 {
		t.Fatalf("%d sums held, want %d (the bound and the other model)", n, maxSpendCells+1)
	}
	fs := &failingSpendStore{fail: true}
	if err := log.flush(context.Background(), fs); err == nil {
		t.Fatal("the failed write was not reported")
	}
	fs.fail = false
	if err := log.flush(context.Background(), fs); err != nil {
		t.Fatal(err)
	}
	var other, pico, total int64
	for _, r := range fs.written {
		total += r.Unpriced
		pico += r.Pico
		if r.Model == spendOtherModel {
			other += r.Unpriced
		}
	}
	// The first maxSpendCells models have sums of their own; the last 10
	// and the priced model, new past the bound, are summed as "(other)"
	// (held again after the failed write, the sums are re-added in the
	// map's order: another may join them). Nothing is lost or counted twice.
	written := len(fs.written)
	if total != maxSpendCells+10 || pico != 7 || other < 10 || written > maxSpendCells+1 {
		t.Errorf("written: %d rows, %d unpriced (%d as other), %d picodollars", written, total, other, pico)
	}
	if err := log.flush(context.Background(), fs); err != nil || len(fs.written) != written {
		t.Errorf("a second flush wrote again: %d rows, %v", len(fs.written), err)
	}
}
