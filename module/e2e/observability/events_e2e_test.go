package observability

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/upstreams"
)

// TestEventsReachSubscribedHandlers: with an events app subscribing a
// handler to each event docs/operations.md lists, traffic that causes
// each one delivers it, with its origin and its documented data: a
// fallback taken, a key refused for its rate limit, a reply that fails
// its checks, a stream the provider cuts, a batch finished and one
// failed, an ingestion finished and one failed.
func TestEventsReachSubscribedHandlers(t *testing.T) {
	for len(caughtEvents) > 0 {
		<-caughtEvents
	}
	bad := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"down","type":"server_error","param":null,"code":null}}`)
	})
	badReply := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"nonconforming"}`)
	})
	cutter := gatewaytest.CuttingProvider(t, "reset")
	events := []string{"fallback_taken", "key_refused", "reply_check_failed", "stream_cut",
		"batch_finished", "batch_failed", "ingestion_finished", "ingestion_failed"}
	var on strings.Builder
	for _, e := range events {
		fmt.Fprintf(&on, "\t\ton %s modelgate_test\n", e)
	}
	options := testgateway.OptionsWith("\tlog {\n\t\tlevel ERROR\n\t}\n\tevents {\n" + on.String() + "\t}\n")
	port := testgateway.FreePort(t)
	testgateway.Load(t, options+fmt.Sprintf(`http://127.0.0.1:%d {
	modelgate {
		key sk-events {
			name events-key
			owner team-e
		}
		key sk-limited {
			name limited
			owner team-l
			rpm 1
		}
		key sk-broke {
			name broke
			owner team-b
			budget 0.000001 day
		}
		%s
		upstream local local {
			data_dir %s
		}
		upstream bad {
			base_url %s/v1
		}
		upstream badreply {
			base_url %s/v1
		}
		upstream cutter {
			base_url %s/v1
		}
		route chat.completions.create model fb to bad fallback reference {
			retries 0
		}
		route chat.completions.create model nonconforming to badreply
		route chat.completions.create model cut to cutter
		route chat.completions.create embeddings.create to reference
	}
}
`, port, gatewaytest.BudgetPrice, filepath.Join(t.TempDir(), "data"), bad.URL, badReply.URL, cutter.URL))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	chat := func(key, model string, stream bool) int {
		body := fmt.Sprintf(`{"model":%q,"stream":%v,"messages":[{"role":"user","content":"Hi"}]}`, model, stream)
		resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", body,
			map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"})
		return resp.StatusCode
	}
	if status := chat("sk-events", "fb", false); status != http.StatusOK {
		t.Fatalf("chat falling back to reference: %d", status)
	}
	if status := chat("sk-events", "nonconforming", false); status != http.StatusOK {
		t.Fatalf("chat with a nonconforming reply (reported): %d", status)
	}
	chat("sk-events", "cut", true)
	if a, b := chat("sk-limited", "reference", false), chat("sk-limited", "reference", false); a != http.StatusOK || b != http.StatusTooManyRequests {
		t.Fatalf("two requests at rpm 1: %d, %d", a, b)
	}
	if status := chat("sk-broke", "budget-model", false); status != http.StatusTooManyRequests {
		t.Fatalf("a request past the key's budget: %d", status)
	}

	client := gatewaytest.SDK(base, option.WithAPIKey("sk-events"))
	ctx := context.Background()
	for _, input := range []string{gatewaytest.BatchInput(2, "reference"), "{not json\n"} {
		b, err := client.Batches.New(ctx, openai.BatchNewParams{InputFileID: gatewaytest.UploadBatchFile(t, client, input),
			Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
		if err != nil {
			t.Fatal(err)
		}
		gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	}
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("events")})
	if err != nil {
		t.Fatal(err)
	}
	gatewaytest.AttachAndPoll(t, client, vs.ID, gatewaytest.Upload(t, client, "notes.txt", []byte("The lighthouse keeper logs the tides.")), nil)
	gatewaytest.AttachAndPoll(t, client, vs.ID, gatewaytest.Upload(t, client, "blob.bin", []byte{0, 1, 2, 3}), nil)

	want := map[string]map[string]any{
		"key_refused budget": {"operation": "chat.completions.create", "model": "budget-model", "key_name": "broke", "owner": "team-b", "reason": "budget", "status": 429},
		"fallback_taken":     {"operation": "chat.completions.create", "model": "fb", "key_name": "events-key", "owner": "team-e", "from": "bad", "to": "reference", "status": 500},
		"key_refused":        {"operation": "chat.completions.create", "model": "reference", "key_name": "limited", "owner": "team-l", "reason": "requests", "status": 429},
		"reply_check_failed": {"operation": "chat.completions.create", "model": "nonconforming", "key_name": "events-key", "upstream": "badreply", "refused": false},
		"stream_cut":         {"operation": "chat.completions.create", "model": "cut", "key_name": "events-key", "upstream": "cutter", "reason": "cut"},
		"batch_finished":     {"status": "completed", "endpoint": "/v1/chat/completions", "model": "reference", "key_name": "events-key", "owner": "team-e", "total": 2, "completed": 2, "failed": 0},
		"batch_failed":       {"status": "failed", "key_name": "events-key", "owner": "team-e"},
		"ingestion_finished": {"vector_store_id": vs.ID, "key_name": "events-key", "owner": "team-e", "code": ""},
		"ingestion_failed":   {"vector_store_id": vs.ID, "key_name": "events-key", "owner": "team-e", "code": "unsupported_file"},
	}
	// Other events of these names may come too (a cut stream's reply
	// also fails its checks): each expected one must come.
	matched, other := map[string]bool{}, map[string][]map[string]any{}
	for len(matched) < len(want) {
		var e caughtEvent
		select {
		case e = <-caughtEvents:
		case <-time.After(30 * time.Second): // a bound on a hung test, not a measure
			t.Fatalf("events matched: %v; others: %v; want each of %v", matched, other, events)
		}
		name := e.name
		if e.data["reason"] == "budget" {
			name += " budget"
		}
		w, ok := want[name]
		if !ok {
			t.Fatalf("unexpected event %s %v", e.name, e.data)
		}
		if e.origin == upstreams.EventsOrigin && hasData(e.data, w) {
			matched[name] = true
		} else {
			other[e.name] = append(other[e.name], map[string]any{"origin": e.origin, "data": e.data})
		}
	}
	if len(events)+1 != len(want) { // key_refused twice: a rate limit and a budget
		t.Fatalf("%d events subscribed, %d checked", len(events), len(want))
	}
}

// hasData reports whether data holds each of want's fields, alike.
func hasData(data, want map[string]any) bool {
	for k, v := range want {
		if fmt.Sprint(data[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}
