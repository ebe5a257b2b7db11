package modelgate_test

import (
	"fmt"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	modelgate "github.com/modelgate/modelgate/module"
)

// weighingMiB is a chat request weighing 1 MiB to the decode budget: 64
// KiB or more long, 16,384 values (7 strings, 2 braces, 2 commas outside
// its content and 16,373 in it) at 64 bytes each.
func weighingMiB() string {
	content := strings.Repeat(",", 16_373) + strings.Repeat("a", 64<<10)
	return `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + content + `"}]}`
}

// waitingForDecodeBudget reports whether a goroutine of this process
// waits for a share of a decode budget.
func waitingForDecodeBudget() bool {
	buf := make([]byte, 8<<20)
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		if strings.Contains(g, "(*decodeBudget).take") && strings.Contains(g, "semaphore.(*Weighted).Acquire") {
			return true
		}
	}
	return false
}

// TestDecodeBudgetOption: decode_budget through a real Caddy at its
// boundary. A provider holds each chat until let go. With decode_budget
// 2MiB a second body weighing 1 MiB reaches the provider while the first
// is held there (the two fit); reloaded with 64 bytes less, the second
// waits for the budget until the first is answered, then goes. Both are
// answered 200. A config whose decode_budget is under 1 MiB fails to load
// with a clear error and leaves the running one serving; the process
// then holds only the running config's budget (the reload dropped the
// old size's).
func TestDecodeBudgetOption(t *testing.T) {
	var mu sync.Mutex
	var gate chan struct{}
	arrived := make(chan struct{}, 4)
	ended := make(chan struct{}) // the test ended: no chat is held any more
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		g := gate
		mu.Unlock()
		arrived <- struct{}{}
		select {
		case <-g:
		case <-ended:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, gatewaytest.ToolCallCompletion)
	})
	t.Cleanup(func() { close(ended) }) // before the provider closes
	port := testgateway.FreePort(t)
	config := func(budget string) string {
		return fmt.Sprintf("%shttp://127.0.0.1:%d {\n%s\n}\n", testgateway.GlobalOptions, port, gatewaytest.ProviderSite(provider.URL, "decode_budget "+budget))
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", port)
	body := weighingMiB()
	send := func(answers chan<- int) {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+gatewaytest.ClientKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Connection", "close") // no connection outlives a reload
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answers <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		answers <- resp.StatusCode
	}
	for i, c := range []struct {
		budget string
		fits   bool
	}{{"2MiB", true}, {fmt.Sprint(2<<20 - 64), false}} {
		if i == 0 {
			testgateway.Load(t, config(c.budget))
		} else {
			testgateway.Reload(t, config(c.budget))
		}
		mu.Lock()
		gate = make(chan struct{})
		mu.Unlock()
		answers := make(chan int, 2)
		go send(answers)
		<-arrived // the first holds its share at the provider
		go send(answers)
		if c.fits {
			<-arrived
		} else {
			// Bounded: the second either waits for the budget or, not
			// bounded by it, reaches the provider.
			for try := 0; !waitingForDecodeBudget(); try++ {
				select {
				case <-arrived:
					t.Fatalf("decode_budget %s: the second body reached the provider while the first held its share", c.budget)
				default:
				}
				if try == 10_000 {
					t.Fatalf("decode_budget %s: the second body never waited for the budget", c.budget)
				}
				time.Sleep(time.Millisecond)
			}
		}
		close(gate)
		if !c.fits {
			<-arrived
		}
		for range 2 {
			if code := <-answers; code != http.StatusOK {
				t.Fatalf("decode_budget %s: answered %d", c.budget, code)
			}
		}
	}
	bad := strings.Replace(string(testgateway.Adapt(t, config("2MiB"))), `"decode_budget":2097152`, `"decode_budget":1048575`, 1)
	if err := caddy.Load([]byte(bad), true); err == nil || !strings.Contains(err.Error(), "decode_budget 1048575 is under 1 MiB") {
		t.Fatalf("a decode_budget under 1 MiB: %v", err)
	}
	if got, want := modelgate.DecodeBudgetSizes(), []int64{2<<20 - 64}; !reflect.DeepEqual(got, want) {
		t.Errorf("budgets held after the reloads: %v, want %v", got, want)
	}
	answers := make(chan int, 1)
	mu.Lock()
	gate = make(chan struct{})
	close(gate)
	mu.Unlock()
	send(answers)
	if code := <-answers; code != http.StatusOK {
		t.Fatalf("after the failed load: %d", code)
	}
}
