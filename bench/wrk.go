package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// wrkHead, then wrkNewTurn or wrkSameBody, then wrkDone make the script
// wrk runs: the key and the content type on every request; ChatBodies'
// bodies (the earlier turns the same, the newest one ending with a request
// number) or one body for every request, as a plain wrk.body sends; and
// what done() saw, printed on one line.
const (
	wrkHead = `wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer %s"
wrk.headers["Content-Type"] = "application/json"
`
	wrkNewTurn = `local prefix, suffix = %q, %q
local n = 0
request = function()
	n = n + 1
	return wrk.format(nil, nil, nil, prefix .. n .. suffix)
end
`
	wrkSameBody = `wrk.body = %q
`
	wrkDone = `done = function(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("harness: %d %d %d %d %d %d %d\n", summary.requests, summary.duration,
		e.connect, e.read, e.write, e.status, e.timeout))
end
`
)

// writeWrkScript writes the script wrk runs into dir and returns its path:
// wrk.lua, a new last turn in each request, or with sameBody
// wrk-same-body.lua, ChatBodies' first body in every request.
func writeWrkScript(dir, key string, sameBody bool) (string, error) {
	bodies := NewChatBodies(false)
	name, bodyPart := "wrk.lua", fmt.Sprintf(wrkNewTurn, bodies.prefix, bodies.suffix)
	if sameBody {
		name, bodyPart = "wrk-same-body.lua", fmt.Sprintf(wrkSameBody, bodies.Next())
	}
	script := filepath.Join(dir, name)
	src := fmt.Sprintf(wrkHead, key) + bodyPart + wrkDone
	if err := os.WriteFile(script, []byte(src), 0o640); err != nil {
		return "", fmt.Errorf("writing the wrk script: %w", err)
	}
	return script, nil
}

// wrkMaxRate is MaxRate with wrk (a separate process, one thread) as the
// load generator, running script: the client then costs a fraction of
// what vegeta costs and runs outside the harness's process (see
// docs/performance.md, the two harnesses). Latencies are not kept:
// percentiles come from the fixed-rate phase.
func wrkMaxRate(ctx context.Context, wrk, script, baseURL string, l Load) Requests {
	secs := max(int(l.Throughput.Round(time.Second)/time.Second), 1)
	cmd := exec.CommandContext(ctx, wrk, "-t1", "-c"+strconv.Itoa(l.Workers), "-d"+strconv.Itoa(secs)+"s",
		"-s", script, baseURL+"/v1/chat/completions")
	out, err := cmd.Output()
	if err == nil {
		var r Requests
		if r, err = parseWrk(out); err == nil {
			return r
		}
	}
	return Requests{Failed: 1, FirstError: fmt.Sprintf("running wrk: %v\n%s", err, out)}
}

// parseWrk reads the line the script's done() prints: requests, duration
// in microseconds, then the connect, read, write, status (non-2xx/3xx) and
// timeout errors.
func parseWrk(out []byte) (Requests, error) {
	for line := range bytes.Lines(out) {
		rest, ok := bytes.CutPrefix(line, []byte("harness: "))
		if !ok {
			continue
		}
		f := strings.Fields(string(rest))
		if len(f) != 7 {
			return Requests{}, fmt.Errorf("wrk's summary %q: want 7 numbers", rest)
		}
		var n [7]int64
		for i, s := range f {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return Requests{}, fmt.Errorf("wrk's summary %q: %w", rest, err)
			}
			n[i] = v
		}
		var r Requests
		for _, e := range n[2:] {
			r.Failed += int(e)
		}
		r.OK = max(int(n[0])-int(n[5]), 0)
		r.Elapsed = time.Duration(n[1]) * time.Microsecond
		if r.Failed > 0 {
			r.FirstError = fmt.Sprintf("wrk: %d connect, %d read, %d write, %d status, %d timeout errors", n[2], n[3], n[4], n[5], n[6])
		}
		return r, nil
	}
	return Requests{}, fmt.Errorf("wrk printed no summary:\n%s", out)
}
