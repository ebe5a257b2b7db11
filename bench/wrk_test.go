package bench

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testservice"
)

// TestWrkSendsTheHarnessRequests: wrk, driven by the harness's scripts,
// sends the key, the content type and ChatBodies' bodies, each with a
// request number of its own, or with the same-body script ChatBodies'
// first body in every request; what the harness counts is what the server
// answered.
func TestWrkSendsTheHarnessRequests(t *testing.T) {
	wrk := testservice.Env(t, "MODELGATE_TEST_WRK", "wrk", "scripts/services/wrk.sh")
	first := string(NewChatBodies(false).Next())
	for _, sameBody := range []bool{false, true} {
		t.Run(map[bool]string{false: "new last turn", true: "same body"}[sameBody], func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string]int{}
			answered := 0
			var bad string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var doc struct {
					Model    string `json:"model"`
					Messages []struct {
						Content string `json:"content"`
					} `json:"messages"`
				}
				mu.Lock()
				defer mu.Unlock()
				answered++
				switch {
				case r.Header.Get("Authorization") != "Bearer k" || r.Header.Get("Content-Type") != "application/json":
					bad = "headers " + r.Header.Get("Authorization") + " / " + r.Header.Get("Content-Type")
				case json.Unmarshal(body, &doc) != nil || doc.Model != BenchModel || len(doc.Messages) != 4:
					bad = "body " + string(body)
				case sameBody && string(body) != first:
					bad = "a body other than the first: " + string(body)
				default:
					last := doc.Messages[3].Content
					if seen[last]++; !sameBody && seen[last] > 1 {
						bad = "a last turn sent twice: " + last
					}
				}
				w.Write([]byte("{}"))
			}))
			defer srv.Close()
			script, err := writeWrkScript(t.TempDir(), "k", sameBody)
			if err != nil {
				t.Fatal(err)
			}
			r := wrkMaxRate(context.Background(), wrk, script, srv.URL, Load{Workers: 2, Throughput: time.Second, Key: "k"})
			mu.Lock()
			defer mu.Unlock()
			if bad != "" {
				t.Fatalf("the server saw %s", bad)
			}
			// wrk stops at the deadline with requests in flight: the
			// server may have answered up to one per connection more than
			// wrk read.
			if r.Failed != 0 || r.OK == 0 || answered < r.OK || answered > r.OK+2 || r.Elapsed < 900*time.Millisecond {
				t.Errorf("wrk counted %d ok, %d failed (%s) in %s; the server answered %d", r.OK, r.Failed, r.FirstError, r.Elapsed, answered)
			}
			if want := map[bool]int{false: answered, true: 1}[sameBody]; len(seen) != want {
				t.Errorf("%d different last turns in %d requests, want %d", len(seen), answered, want)
			}
		})
	}
}

func TestParseWrk(t *testing.T) {
	r, err := parseWrk([]byte("Running 1s test\n  2 threads\nharness: 1200 1003000 0 1 0 7 2\nRequests/sec: 1196\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r.OK != 1193 || r.Failed != 10 || r.Elapsed != 1003*time.Millisecond || !strings.Contains(r.FirstError, "7 status") {
		t.Errorf("parsed %+v", r)
	}
	for _, out := range []string{"no summary\n", "harness: 1 2 3\n", "harness: 1 2 3 4 5 6 x\n"} {
		if _, err := parseWrk([]byte(out)); err == nil {
			t.Errorf("%q parsed", out)
		}
	}
}
