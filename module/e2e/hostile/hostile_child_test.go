package hostile

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testdocs"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// hostileAttack is a request whose content would scale the gateway's
// work, with the status it must get and the parameter a 400 names.
type hostileAttack struct {
	name, path, body, param string
	status                  int
}

// hostileAttacks are the attacks, chat completions to the reference
// engine but for a search of the vector store vs.
func hostileAttacks(vs string) []hostileAttack {
	chat := func(extra string) string {
		return `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"use a tool please"}]` + extra + `}`
	}
	schema := func(s string) string {
		return chat(`,"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":` + s + `}}`)
	}
	// list joins n items made by item, comma-separated.
	list := func(n int, item func(i int) string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(item(i))
		}
		return b.String()
	}
	nested := `{"type":"array","minItems":1000,"items":{"type":"array","minItems":1000,"items":{"type":"array","minItems":1000,"items":{"type":"integer"}}}}`
	deep := strings.Repeat(`{"type":"array","items":`, 5000) + `{"type":"string"}` + strings.Repeat(`}`, 5000)
	tools := list(2000, func(i int) string {
		return fmt.Sprintf(`{"type":"function","function":{"name":"t%d","parameters":{"type":"object","properties":{"a":{"type":"string","minLength":400}},"required":["a"]}}}`, i)
	})
	bias := list(20000, func(i int) string { return fmt.Sprintf(`"%d":%d`, i, 100-i%201) })
	search := "/v1/vector_stores/" + vs + "/search"
	return []hostileAttack{
		{"nested minItems 1000^3", "", schema(nested), "response_format", 400},
		{"minLength 1e8", "", schema(`{"type":"string","minLength":100000000}`), "response_format", 400},
		{"maxLength -1", "", schema(`{"type":"string","maxLength":-1}`), "response_format", 400},
		{"minItems 1e18", "", schema(`{"type":"array","minItems":1e18}`), "response_format", 400},
		{"recursive $ref tree", "", schema(`{"type":"object","properties":{"a":{"$ref":"#"},"b":{"$ref":"#"}},"required":["a","b"]}`), "response_format", 400},
		{"deeply nested schema", "", schema(deep), "response_format", 400},
		{"catastrophic pattern", "", schema(`{"type":"string","pattern":"^(a+)+$","minLength":30}`), "", 200},
		{"pattern a{1000}{1000}{1000}", "", schema(`{"type":"string","pattern":"((a{1000}){1000}){1000}"}`), "response_format", 400},
		{"pattern of 100,000 branches", "", schema(`{"type":"string","pattern":"` + list(100000, func(i int) string { return fmt.Sprintf("w%d", i) }) + `"}`), "", 200},
		{"tool parameters 1000^3", "", chat(`,"tools":[{"type":"function","function":{"name":"t","parameters":` + nested + `}}],"tool_choice":"required"`), "tools[0].function.parameters", 400},
		{"2000 tools all called", "", chat(`,"tools":[` + tools + `],"tool_choice":"required","n":128`), "", 200},
		{"logprobs of a 1,000,000-byte string", "", chat(`,"logprobs":true,"top_logprobs":20,"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"string","minLength":1000000}}}`), "top_logprobs", 400},
		{"max_tokens 2^63-1", "", chat(`,"max_tokens":9223372036854775807`), "max_tokens", 400},
		{"n 2, max_tokens 2^62", "", chat(`,"n":2,"max_tokens":4611686018427387904`), "max_tokens", 400},
		{"n 129", "", chat(`,"n":129`), "n", 400},
		{"n 128", "", chat(`,"n":128,"max_tokens":50`), "", 200},
		{"logit_bias 20,000 entries", "", chat(`,"logit_bias":{` + bias + `}`), "", 200},
		{"one 1 MiB token", "", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("a", 1<<20) + `"}],"max_tokens":5}`, "", 200},
		{"deep JSON nesting", "", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x","name":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}]}`, "", 400},
		{"100,000 messages", "", `{"model":"gpt-4o-mini","messages":[` + list(100000, func(i int) string { return fmt.Sprintf(`{"role":"user","content":"m%d"}`, i) }) + `]}`, "", 200},
		{"100,000 content parts", "", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":[` + list(100000, func(i int) string { return fmt.Sprintf(`{"type":"text","text":"p%d"}`, i) }) + `]}]}`, "", 200},
		{"100,000 stop sequences", "", chat(`,"stop":[` + list(100000, func(i int) string { return fmt.Sprintf(`"s%d"`, i) }) + `]`), "stop", 400},
		{"60 MiB of small numbers", "/v1/embeddings", `{"model":"text-embedding-3-small","input":[0` + strings.Repeat(`,0`, 30<<20) + `]}`, "input", 400},
		{"search filter of 100,000 values", search, `{"query":"x","filters":{"type":"in","key":"file_id","value":[` + list(100000, func(i int) string { return fmt.Sprintf(`"f%d"`, i) }) + `]}}`, "filters", 400},
		{"search filter nested 2,000 deep", search, `{"query":"x","filters":` + strings.Repeat(`{"type":"or","filters":[`, 2000) + `{"type":"eq","key":"k","value":"v"}` + strings.Repeat(`]}`, 2000) + `}`, "filters", 400},
	}
}

// Bounds on each attack's cost in the gateway process, with room for the
// race detector (several times slower, and its shadow memory): what the
// process may hold at its peak (the generation budget is 1 MiB of text
// and 100,000 values a request; unbounded, the first attack took tens of
// GiB), and the CPU time one attack may take (unbounded, it never ended).
const (
	maxAttackPeakRSS = 1<<30 + gatewaytest.RaceExtraRSS
	maxAttackCPU     = 60 * time.Second
)

// TestHostileRequestsAreBoundedInTheProcess sends, to a gateway running as
// a process of its own, every request whose content scales the work: each
// gets its status (a 400 naming the parameter where the request cannot be
// served) within maxAttackCPU of the process's CPU time, the process's
// peak memory stays under maxAttackPeakRSS, the gateway still serves
// afterwards, and SIGTERM ends it.
func TestHostileRequestsAreBoundedInTheProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a gateway process")
	}
	port := testgateway.FreePort(t)
	child := gatewaytest.StartChildWith(t, "data_dir "+t.TempDir(), "route chat.completions.create to reference", port)
	pid := child.Cmd.Process.Pid
	headers := map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "Content-Type": "application/json", "OpenAI-Beta": "assistants=v2"}
	client := gatewaytest.SDK(child.Base)
	vs, err := client.VectorStores.New(context.Background(), openai.VectorStoreNewParams{Name: openai.String("searched")})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range hostileAttacks(vs.ID) {
		if only := os.Getenv("MODELGATE_HOSTILE_ONLY"); only != "" && !strings.Contains(a.name, only) {
			continue
		}
		if a.path == "" {
			a.path = "/v1/chat/completions"
		}
		start, cpu := time.Now(), cpuTime(t, pid)
		resp, env := gatewaytest.RawRequest(t, "POST", child.Base+a.path, a.body, headers)
		wall, used, peak := time.Since(start), cpuTime(t, pid)-cpu, gatewaytest.PeakRSS(t, pid)
		t.Logf("%-36s %d in %7v (CPU %7v), %5.1f MiB sent, peak RSS %d MiB", a.name, resp.StatusCode, wall.Round(time.Millisecond),
			used.Round(time.Millisecond), float64(len(a.body))/(1<<20), peak>>20)
		if resp.StatusCode != a.status {
			t.Errorf("%s: status %d (%+v), want %d", a.name, resp.StatusCode, env.Error, a.status)
		}
		if resp.StatusCode >= 500 {
			t.Errorf("%s: status %d: %+v", a.name, resp.StatusCode, env.Error)
		}
		if a.param != "" && (env.Error.Param == nil || *env.Error.Param != a.param) {
			t.Errorf("%s: param %v, want %s", a.name, env.Error.Param, a.param)
		}
		if used > maxAttackCPU || peak > maxAttackPeakRSS {
			t.Errorf("%s: %v of CPU, peak RSS %d MiB", a.name, used, peak>>20)
		}
	}
	if resp, _ := gatewaytest.RawRequest(t, "POST", child.Base+"/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"still there?"}]}`, headers); resp.StatusCode != 200 {
		t.Fatalf("after the attacks: %d", resp.StatusCode)
	}
	child.StopsOnSIGTERM(t)
}

// cpuTime reads the CPU time (user and system) a process has used.
func cpuTime(t testing.TB, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command name (which may hold spaces): state is
	// the first, utime and stime the 12th and 13th, in clock ticks (100 a
	// second on Linux).
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
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
	child := gatewaytest.StartChildWith(t, store, extra, port)
	client := gatewaytest.SDK(child.Base)
	var in strings.Builder
	for i := range 20 {
		content := fmt.Sprintf("line %d", i)
		if i == 10 {
			content = "POISON"
		}
		fmt.Fprintf(&in, `{"custom_id":"req-%d","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini","messages":[{"role":"user","content":%q}]}}`+"\n", i, content)
	}
	fileID := gatewaytest.UploadBatchFile(t, client, in.String())
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{InputFileID: fileID, Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	for kill := 1; kill <= 2; kill++ {
		<-arrived
		child.Cmd.Process.Signal(syscall.SIGKILL)
		child.Wait()
		child = gatewaytest.StartChildWith(t, store, extra, port)
	}
	client = gatewaytest.SDK(child.Base)
	done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
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
	child := gatewaytest.StartChildWith(t, "data_dir "+t.TempDir(), "", port)
	client := gatewaytest.SDK(child.Base)
	ctx := context.Background()
	cyclic := gatewaytest.Upload(t, client, "cyclic.pdf", testdocs.CyclicPDF())
	huge := gatewaytest.Upload(t, client, "huge.pdf", testdocs.HugeCountPDF())
	text := gatewaytest.Upload(t, client, "plain.txt", []byte("an ordinary file about herons"))
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("bad pdfs"), FileIDs: []string{cyclic, huge, text}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3000 {
		files := gatewaytest.ListStoreFiles(t, client, vs.ID)
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
			child.StopsOnSIGTERM(t)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("ingestion never finished")
}
