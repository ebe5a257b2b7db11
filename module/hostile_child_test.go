package modelgate_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/testdocs"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// hostileAttacks are requests whose content would scale the gateway's
// work, with the status each must get.
func hostileAttacks() []struct {
	name, body, param string
	status            int
} {
	chat := func(extra string) string {
		return `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"use a tool please"}]` + extra + `}`
	}
	schema := func(s string) string {
		return chat(`,"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":` + s + `}}`)
	}
	nested := `{"type":"array","minItems":1000,"items":{"type":"array","minItems":1000,"items":{"type":"array","minItems":1000,"items":{"type":"integer"}}}}`
	deep := strings.Repeat(`{"type":"array","items":`, 5000) + `{"type":"string"}` + strings.Repeat(`}`, 5000)
	var tools, bias strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&tools, `%s{"type":"function","function":{"name":"t%d","parameters":{"type":"object","properties":{"a":{"type":"string","minLength":400}},"required":["a"]}}}`, map[bool]string{true: "", false: ","}[i == 0], i)
	}
	for i := range 20000 {
		fmt.Fprintf(&bias, `%s"%d":%d`, map[bool]string{true: "", false: ","}[i == 0], i, 100-i%201)
	}
	return []struct {
		name, body, param string
		status            int
	}{
		{"nested minItems 1000^3", schema(nested), "response_format", 400},
		{"minLength 1e8", schema(`{"type":"string","minLength":100000000}`), "response_format", 400},
		{"maxLength -1", schema(`{"type":"string","maxLength":-1}`), "response_format", 400},
		{"minItems 1e18", schema(`{"type":"array","minItems":1e18}`), "response_format", 400},
		{"recursive $ref tree", schema(`{"type":"object","properties":{"a":{"$ref":"#"},"b":{"$ref":"#"}},"required":["a","b"]}`), "response_format", 400},
		{"deeply nested schema", schema(deep), "", 0},
		{"tool parameters 1000^3", chat(`,"tools":[{"type":"function","function":{"name":"t","parameters":` + nested + `}}],"tool_choice":"required"`), "tools[0].function.parameters", 400},
		{"2000 tools all called", chat(`,"tools":[` + tools.String() + `],"tool_choice":"required","n":128`), "", 0},
		{"max_tokens 2^63-1", chat(`,"max_tokens":9223372036854775807`), "max_tokens", 400},
		{"n 2, max_tokens 2^62", chat(`,"n":2,"max_tokens":4611686018427387904`), "max_tokens", 400},
		{"n 129", chat(`,"n":129`), "n", 400},
		{"n 128", chat(`,"n":128,"max_tokens":50`), "", 200},
		{"logit_bias 20,000 entries", chat(`,"logit_bias":{` + bias.String() + `}`), "", 0},
		{"one 1 MiB token", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("a", 1<<20) + `"}],"max_tokens":5}`, "", 200},
		{"deep JSON nesting", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x","name":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}]}`, "", 400},
	}
}

// TestHostileRequestsAreBoundedInTheProcess sends, to a gateway running as
// a process of its own, every request whose content scales the work: each
// gets its status (a 400 naming the parameter where the request cannot be
// served), the process's peak memory stays bounded, the gateway still
// serves afterwards, and SIGTERM ends it.
func TestHostileRequestsAreBoundedInTheProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a gateway process")
	}
	port := testgateway.FreePort(t)
	child := startChildWith(t, "data_dir "+t.TempDir(), "route chat.completions.create to reference", port)
	pid := child.cmd.Process.Pid
	url := child.base + "/v1/chat/completions"
	headers := map[string]string{"Authorization": "Bearer " + clientKey, "Content-Type": "application/json"}
	for _, a := range hostileAttacks() {
		if only := os.Getenv("MODELGATE_HOSTILE_ONLY"); only != "" && !strings.Contains(a.name, only) {
			continue
		}
		start := time.Now()
		resp, env := rawRequest(t, "POST", url, a.body, headers)
		t.Logf("%-28s %d in %v, peak RSS %d MiB", a.name, resp.StatusCode, time.Since(start).Round(time.Millisecond), peakRSS(t, pid)>>20)
		if a.status != 0 && resp.StatusCode != a.status {
			t.Errorf("%s: status %d (%+v), want %d", a.name, resp.StatusCode, env.Error, a.status)
		}
		if resp.StatusCode >= 500 {
			t.Errorf("%s: status %d: %+v", a.name, resp.StatusCode, env.Error)
		}
		if a.param != "" && (env.Error.Param == nil || *env.Error.Param != a.param) {
			t.Errorf("%s: param %v, want %s", a.name, env.Error.Param, a.param)
		}
	}
	// 1 GiB is far above what any of them may cost (the generation budget
	// is 1 MiB of text and 100,000 values a request) and far below what
	// they cost without bounds (tens of GiB).
	if peak := peakRSS(t, pid); peak > 1<<30 {
		t.Errorf("peak RSS %d MiB", peak>>20)
	}
	if resp, _ := rawRequest(t, "POST", url, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"still there?"}]}`, headers); resp.StatusCode != 200 {
		t.Fatalf("after the attacks: %d", resp.StatusCode)
	}
	child.stopsOnSIGTERM(t)
}

// TestPoisonBatchLineIsQuarantinedAcrossKills: a batch line during which
// the gateway is killed with SIGKILL, twice, is not run a third time after
// the restart: it ends in the error file as quarantined, and the rest of
// the batch completes.
func TestPoisonBatchLineIsQuarantinedAcrossKills(t *testing.T) {
	if testing.Short() {
		t.Skip("runs and kills gateway processes")
	}
	var poisonCalls atomic.Int64
	arrived := make(chan struct{}, 4)
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte("POISON")) {
			poisonCalls.Add(1)
			arrived <- struct{}{}
			<-r.Context().Done() // the gateway dies meanwhile
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"ok","refusal":null},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	defer provider.Close()
	dataDir, port := t.TempDir(), testgateway.FreePort(t)
	store := "data_dir " + dataDir
	extra := fmt.Sprintf("upstream p openai {\n\t\t\tbase_url %s/v1\n\t\t}\n\t\troute chat.completions.create to p", provider.URL)
	child := startChildWith(t, store, extra, port)
	client := sdk(child.base)
	var in strings.Builder
	for i := range 20 {
		content := fmt.Sprintf("line %d", i)
		if i == 10 {
			content = "POISON"
		}
		fmt.Fprintf(&in, `{"custom_id":"req-%d","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini","messages":[{"role":"user","content":%q}]}}`+"\n", i, content)
	}
	fileID := uploadBatchFile(t, client, in.String())
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{InputFileID: fileID, Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	for kill := 1; kill <= 2; kill++ {
		<-arrived
		child.cmd.Process.Signal(syscall.SIGKILL)
		child.cmd.Wait()
		child = startChildWith(t, store, extra, port)
	}
	client = sdk(child.base)
	done := pollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Failed != 1 || done.RequestCounts.Completed != 19 {
		t.Fatalf("batch %s: %+v", done.Status, done.RequestCounts)
	}
	resp, err := client.Files.Content(context.Background(), done.ErrorFileID)
	if err != nil {
		t.Fatal(err)
	}
	errs, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(errs, []byte(`"custom_id":"req-10"`)) || !bytes.Contains(errs, []byte("request_quarantined")) {
		t.Fatalf("error file: %s", errs)
	}
	if n := poisonCalls.Load(); n != 2 {
		t.Fatalf("the poison line was sent %d times, want 2", n)
	}
}

// TestBadPDFsFailWhileOthersComplete: the two 240-byte PDFs that kept
// ingestion workers busy forever (a page tree that lists itself; a page
// count of two billion) end failed with a clear last_error, a .txt
// attached after them completes, and SIGTERM stops the gateway.
func TestBadPDFsFailWhileOthersComplete(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a gateway process")
	}
	port := testgateway.FreePort(t)
	child := startChildWith(t, "data_dir "+t.TempDir(), "", port)
	client := sdk(child.base)
	ctx := context.Background()
	cyclic := upload(t, client, "cyclic.pdf", testdocs.CyclicPDF())
	huge := upload(t, client, "huge.pdf", testdocs.HugeCountPDF())
	text := upload(t, client, "plain.txt", []byte("an ordinary file about herons"))
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("bad pdfs"), FileIDs: []string{cyclic, huge, text}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3000 {
		files := listStoreFiles(t, client, vs.ID)
		if files[cyclic].Status != openai.VectorStoreFileStatusInProgress && files[huge].Status != openai.VectorStoreFileStatusInProgress &&
			files[text].Status != openai.VectorStoreFileStatusInProgress {
			if files[cyclic].Status != "failed" || !strings.Contains(files[cyclic].LastError.Message, "lists itself") {
				t.Fatalf("cyclic PDF: %+v", files[cyclic])
			}
			if files[huge].Status != "failed" || files[huge].LastError.Message == "" {
				t.Fatalf("huge-count PDF: %+v", files[huge])
			}
			if files[text].Status != "completed" {
				t.Fatalf("text file: %+v", files[text])
			}
			child.stopsOnSIGTERM(t)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("ingestion never finished")
}
