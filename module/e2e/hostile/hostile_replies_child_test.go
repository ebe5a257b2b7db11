package hostile

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// Bounds on the reply attacks, four at once: the peak memory above the
// idle gateway (unbounded, one request took +1.1 GB and four killed the
// process) and the CPU time of the four together (unbounded, one
// streamed request took 74 s). Measured: +73-76 MiB and 5.7 s; under the
// race detector +190 MiB and 63 s.
const (
	maxReplyAttackRSS = 256<<20 + gatewaytest.RaceExtraRSS
	maxReplyAttackCPU = 20 * time.Second * gatewaytest.RaceSlowdown
)

// logprobsAttack is the 311-byte request whose reply was 184 MiB: a
// string of minLength bytes with logprobs and 20 alternatives a token.
func logprobsAttack(minLength int, stream bool) string {
	return fmt.Sprintf(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":%t,"logprobs":true,"top_logprobs":20,`+
		`"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"string","minLength":%d}}}}`, stream, minLength)
}

// fourAtOnce sends the bodies at once and returns each one's status and
// reply.
func fourAtOnce(url string, bodies [4]string) (status [4]int, replies [4][]byte, errs [4]error) {
	var wg sync.WaitGroup
	for i, body := range bodies {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", url, strings.NewReader(body))
			for k, v := range gatewaytest.ChatHeaders {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			status[i] = resp.StatusCode
			replies[i], errs[i] = io.ReadAll(resp.Body)
		})
	}
	wg.Wait()
	return status, replies, errs
}

// TestHostileLogprobsAmplificationIsBounded sends to a gateway
// process the request whose logprobs multiplied its reply ~180 times, four
// at once (two streamed): each is a 400 naming top_logprobs; then four of
// the largest such replies the engine serves (a 16,000-byte string, 3 MiB
// of reply), and the same four requests as batch lines, which fail with
// the same error and leave the line after them completed. The process's
// peak memory stays within maxReplyAttackRSS of the idle gateway, the CPU
// within maxReplyAttackCPU, and the gateway serves afterwards.
func TestHostileLogprobsAmplificationIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a gateway process")
	}
	port := testgateway.FreePort(t)
	child := gatewaytest.StartChildWith(t, "data_dir "+t.TempDir(), "route chat.completions.create to reference", port)
	pid := child.Cmd.Process.Pid
	url := child.Base + "/v1/chat/completions"
	if resp, _ := gatewaytest.RawRequest(t, "POST", url, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"warm up"}]}`, gatewaytest.ChatHeaders); resp.StatusCode != 200 {
		t.Fatalf("warm-up: %d", resp.StatusCode)
	}
	idle, cpu := gatewaytest.PeakRSS(t, pid), cpuTime(t, pid)

	attack := [4]string{logprobsAttack(1_000_000, false), logprobsAttack(1_000_000, true), logprobsAttack(1_000_000, false), logprobsAttack(1_000_000, true)}
	status, replies, errs := fourAtOnce(url, attack)
	for i := range attack {
		var env gatewaytest.Envelope
		json.Unmarshal(replies[i], &env)
		if errs[i] != nil || status[i] != 400 || env.Error.Param == nil || *env.Error.Param != "top_logprobs" || env.Error.Type != "invalid_request_error" {
			t.Errorf("attack %d: %d %v %s", i, status[i], errs[i], replies[i])
		}
	}
	largest := [4]string{logprobsAttack(16_000, false), logprobsAttack(16_000, true), logprobsAttack(16_000, false), logprobsAttack(16_000, true)}
	status, replies, errs = fourAtOnce(url, largest)
	for i := range largest {
		if errs[i] != nil || status[i] != 200 || len(replies[i]) < 2<<20 {
			t.Errorf("largest reply %d: %d %v, %d bytes", i, status[i], errs[i], len(replies[i]))
		}
	}

	client := gatewaytest.SDK(child.Base)
	var in strings.Builder
	for i := range 4 {
		fmt.Fprintf(&in, `{"custom_id":"attack-%d","method":"POST","url":"/v1/chat/completions","body":%s}`+"\n", i, logprobsAttack(1_000_000, false))
	}
	in.WriteString(gatewaytest.ChatBatchLine("after", "still served"))
	done := gatewaytest.RunChatBatch(t, client, in.String())
	if done.RequestCounts.Failed != 4 || done.RequestCounts.Completed != 1 {
		t.Fatalf("batch %s: %+v", done.Status, done.RequestCounts)
	}
	errFile := gatewaytest.FileContent(t, client, done.ErrorFileID)
	if n := strings.Count(string(errFile), `"param":"top_logprobs"`); n != 4 {
		t.Fatalf("%d of the 4 lines failed naming top_logprobs: %s", n, errFile)
	}

	peak, used := gatewaytest.PeakRSS(t, pid), cpuTime(t, pid)-cpu
	t.Logf("idle %d MiB, peak %d MiB (+%d MiB), CPU %v", idle>>20, peak>>20, (peak-idle)>>20, used)
	if peak-idle > maxReplyAttackRSS || used > maxReplyAttackCPU {
		t.Errorf("peak RSS +%d MiB over the idle gateway, %v of CPU", (peak-idle)>>20, used)
	}
	if resp, _ := gatewaytest.RawRequest(t, "POST", url, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"still there?"}]}`, gatewaytest.ChatHeaders); resp.StatusCode != 200 {
		t.Fatalf("after the attacks: %d", resp.StatusCode)
	}
	child.StopsOnSIGTERM(t)
}
