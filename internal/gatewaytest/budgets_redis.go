package gatewaytest

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
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

// Lost counts the requests of a burst that got no reply, by base and
// transport error: the error tells a connection closed unanswered (EOF)
// from one reset, a refused dial or a timeout, which a count of missing
// replies does not.
type Lost map[string]int

// add counts err of a request to base under its kind: the error's text
// without the URL, and without the connection's addresses (its local port
// differs for each request), so that errors of one kind add up.
func (l Lost) add(base string, err error) {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	kind := err.Error()
	var operr *net.OpError
	if errors.As(err, &operr) {
		kind = fmt.Sprintf("%s %s: %v", operr.Op, operr.Net, operr.Err)
	}
	l[fmt.Sprintf("%s from %s", kind, base)]++
}

// Total is how many requests were lost.
func (l Lost) Total() int {
	n := 0
	for _, c := range l {
		n += c
	}
	return n
}

// String is "count× kind" for each kind, in the kinds' order.
func (l Lost) String() string {
	kinds := slices.Sorted(maps.Keys(l))
	for i, kind := range kinds {
		kinds[i] = fmt.Sprintf("%d× %s", l[kind], kind)
	}
	return strings.Join(kinds, "; ")
}

// SendAll sends n chat requests with the key at once, taking turns over
// the bases, and returns the replies that came and what the others lost.
func SendAll(bases []string, key, body string, n int) ([]Reply, Lost) {
	var (
		mu      sync.Mutex
		replies []Reply
		lost    = Lost{}
		wg      sync.WaitGroup
	)
	for i := range n {
		wg.Go(func() {
			base := bases[i%len(bases)]
			resp, got, err := SendChat(base, key, body)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				lost.add(base, err)
				return
			}
			replies = append(replies, Reply{resp, got})
		})
	}
	wg.Wait()
	return replies, lost
}

// PostAll is SendAll that fails the test, naming each transport error and
// how many requests it took, when any request got no reply.
func PostAll(t *testing.T, bases []string, key, body string, n int) []Reply {
	t.Helper()
	replies, lost := SendAll(bases, key, body, n)
	if len(lost) > 0 {
		t.Errorf("%d of %d requests got no reply: %v", lost.Total(), n, lost)
	}
	return replies
}
