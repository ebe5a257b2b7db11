package hostile

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// Bounds on the Responses items attack, four at once: the peak memory
// above the idle gateway and the CPU time of the four together. Before
// their bounds the four took 27 s of CPU and +1,987 MiB, and three failed
// with a busy store; made one at a time (largeTurn) they still held
// +850 MiB, as the requests waiting their turn held their decoded bodies.
// Now large bodies are decoded and served within a process-wide budget
// (decode_budget), a response lets go of its decoded input once read
// and writes its chat without a map per message, and the heap is
// collected between its phases: +192 to +221 MiB measured on a loaded
// machine; under the race detector +542 MiB and 3m45s of CPU.
const (
	maxItemsAttackRSS = 256<<20 + gatewaytest.RaceExtraRSS
	maxItemsAttackCPU = 60 * time.Second * gatewaytest.RaceSlowdown
)

// itemsAttack is a stored response of n one-letter input items.
func itemsAttack(n int) string {
	return `{"model":"gpt-4o-mini","max_output_tokens":16,"input":[` +
		strings.TrimSuffix(strings.Repeat(`{"role":"user","content":"a"},`, n), ",") + `]}`
}

// TestHostileResponsesItemsAreBounded sends to a gateway process four
// responses of 199,000 one-letter input items at once, each stored with
// its items, while another owner makes small writes (conversations): the
// four are answered 200 with their items listed, every write of the other
// owner succeeds (none is a 500; one that waited busy_timeout in vain is
// a 503 store_busy with Retry-After, and passes when sent again after it,
// as the SDKs do; under the race detector, which makes the transaction
// storing 199,000 items several times longer, up to 3*gatewaytest.RaceSlowdown
// times), the process's peak memory stays within
// maxItemsAttackRSS of the idle gateway and its CPU within
// maxItemsAttackCPU, and the gateway serves afterwards.
func TestHostileResponsesItemsAreBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a gateway process")
	}
	const otherKey = "sk-other-owner-key-0003"
	port := testgateway.FreePort(t)
	child := gatewaytest.StartChildWith(t, "data_dir "+t.TempDir(), "route chat.completions.create to reference\n\t\tkey "+otherKey+" {\n\t\t\towner other\n\t\t}", port)
	pid := child.Cmd.Process.Pid
	url := child.Base + "/v1/responses"
	if resp, _ := gatewaytest.RawRequest(t, "POST", url, itemsAttack(3), gatewaytest.ChatHeaders); resp.StatusCode != 200 {
		t.Fatalf("warm-up: %d %s", resp.StatusCode, gatewaytest.LastBody)
	}
	idle, cpu := gatewaytest.PeakRSS(t, pid), cpuTime(t, pid)

	const items = 199_000
	body := itemsAttack(items)
	other := map[string]string{"Authorization": "Bearer " + otherKey, "Content-Type": "application/json"}
	var wg sync.WaitGroup
	done := make(chan struct{})
	var otherStatus []int
	var slowest time.Duration
	busy := 0
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			start := time.Now()
			code := 0
			for try := 0; try < 3*gatewaytest.RaceSlowdown && (try == 0 || code == http.StatusServiceUnavailable); try++ {
				req, _ := http.NewRequest("POST", child.Base+"/v1/conversations", strings.NewReader(`{"metadata":{"k":"v"}}`))
				for k, v := range other {
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					code = 0
					break
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if code = resp.StatusCode; code == http.StatusServiceUnavailable {
					busy++
					if resp.Header.Get("Retry-After") != "1" {
						code = -1 // a 503 without the wait to retry after
						break
					}
					time.Sleep(time.Second)
				}
			}
			slowest = max(slowest, time.Since(start))
			otherStatus = append(otherStatus, code)
			time.Sleep(50 * time.Millisecond)
		}
	})
	status, replies, errs := fourAtOnce(url, [4]string{body, body, body, body})
	close(done)
	wg.Wait()
	peak, used := gatewaytest.PeakRSS(t, pid), cpuTime(t, pid)-cpu
	t.Logf("idle %d MiB, peak %d MiB (+%d MiB), CPU %v; the other owner's %d writes, %d answered 503 store_busy first, the slowest %v",
		idle>>20, peak>>20, (peak-idle)>>20, used, len(otherStatus), busy, slowest.Round(time.Millisecond))
	for i := range 4 {
		var r struct{ ID string }
		if errs[i] != nil || status[i] != 200 || json.Unmarshal(replies[i], &r) != nil {
			t.Errorf("attack %d: %d %v %.300s", i, status[i], errs[i], replies[i])
			continue
		}
		if i == 0 {
			resp, _ := gatewaytest.RawRequest(t, "GET", url+"/"+r.ID+"/input_items?limit=100&order=asc", "", gatewaytest.ChatHeaders)
			if resp.StatusCode != 200 || strings.Count(string(gatewaytest.LastBody), `"text":"a"`) != 100 || !strings.Contains(string(gatewaytest.LastBody), `"has_more":true`) {
				t.Errorf("input items: %d %.300s", resp.StatusCode, gatewaytest.LastBody)
			}
		}
	}
	for i, s := range otherStatus {
		if s != 200 {
			t.Errorf("the other owner's write %d: %d", i, s)
		}
	}
	if peak-idle > maxItemsAttackRSS || used > maxItemsAttackCPU {
		t.Errorf("peak RSS +%d MiB over the idle gateway, %v of CPU", (peak-idle)>>20, used)
	}
	if resp, _ := gatewaytest.RawRequest(t, "POST", url, itemsAttack(2), gatewaytest.ChatHeaders); resp.StatusCode != 200 {
		t.Fatalf("after the attack: %d", resp.StatusCode)
	}
	child.StopsOnSIGTERM(t)
}
