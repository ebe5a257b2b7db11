package gatewaytest

import (
	"net/http"
	"sync"
	"testing"
)

// BudgetPrice prices budget-model on the reference engine at $1 per 1M
// input and $2 per 1M output tokens (1 and 2 microdollars a token).
const BudgetPrice = `price reference budget-model {
			input 1
			output 2
			batch_discount 50
		}`

// Reply is one response and its body.
type Reply struct {
	Resp *http.Response
	Body string
}

// PostAll sends n chat requests with the key at once, taking turns over
// the bases, and returns the replies that came.
func PostAll(t *testing.T, bases []string, key, body string, n int) []Reply {
	var (
		mu      sync.Mutex
		replies []Reply
		wg      sync.WaitGroup
	)
	for i := range n {
		wg.Go(func() {
			if resp, got := Post(t, bases[i%len(bases)], key, body); resp != nil {
				mu.Lock()
				replies = append(replies, Reply{resp, got})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return replies
}
