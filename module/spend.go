package modelgate

import (
	"context"
	"sync"
	"time"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// spendLog sums the cost of the exchanges per hour, key, owner, model and
// upstream in memory, for the management API's store: a request adds to a
// sum under a mutex; the sums go to the store together, in one
// transaction, at each refresh (spendLog.flush), so the store sees one
// write per instance and refresh, never one per request.
type spendLog struct {
	mu      sync.Mutex
	pending map[spendKey]*spendSum
}

type spendKey struct {
	hour                        int64
	key, owner, model, upstream string
}

type spendSum struct{ pico, requests, unpriced int64 }

// maxSpendCells bounds the sums held between two flushes (or while the
// store cannot be written). Keys, owners, upstreams and priced models are
// bounded by the config and the price table; the model of an unpriced
// reply is the client's, so past the bound new models are summed as
// spendOtherModel.
const maxSpendCells = 4096

// spendOtherModel is the model of the sums past maxSpendCells.
const spendOtherModel = "(other)"

// add counts the cost of the work a request did itself (work it
// dispatched is counted where it was done), as the metrics do.
func (s *spendLog) add(req *request) {
	c := &req.cost
	if !c.priced || c.dispatched || req.call == nil {
		return
	}
	k := spendKey{hour: time.Now().Unix() / 3600 * 3600, key: req.call.Principal.KeyName, owner: req.call.Principal.Owner,
		model: req.call.Model, upstream: req.upstream}
	sum := spendSum{unpriced: 1}
	if !c.unpriced {
		k.model, sum = c.row.Model, spendSum{pico: c.pico, requests: 1}
	}
	s.mu.Lock()
	s.addLocked(k, sum)
	s.mu.Unlock()
}

func (s *spendLog) addLocked(k spendKey, sum spendSum) {
	cell := s.pending[k]
	if cell == nil {
		if s.pending == nil {
			s.pending = map[spendKey]*spendSum{}
		}
		if len(s.pending) >= maxSpendCells {
			k.model = spendOtherModel
			cell = s.pending[k]
		}
		if cell == nil {
			cell = &spendSum{}
			s.pending[k] = cell
		}
	}
	cell.pico += sum.pico
	cell.requests += sum.requests
	cell.unpriced += sum.unpriced
}

// flush writes the sums held to the store in one transaction; when the
// store refuses them they are held again for the next flush.
func (s *spendLog) flush(ctx context.Context, gs store.GatewayStore) error {
	s.mu.Lock()
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	rows := make([]store.SpendRow, 0, len(pending))
	for k, v := range pending {
		rows = append(rows, store.SpendRow{Hour: k.hour, KeyName: k.key, Owner: k.owner, Model: k.model, Upstream: k.upstream,
			Pico: v.pico, Requests: v.requests, Unpriced: v.unpriced})
	}
	err := gs.AddSpend(ctx, rows)
	if err != nil {
		s.mu.Lock()
		for k, v := range pending {
			s.addLocked(k, *v)
		}
		s.mu.Unlock()
	}
	return err
}
