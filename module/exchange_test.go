package modelgate

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/modelgate/modelgate/internal/sse"
	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
)

// spyChecker records, for each write it is fed, whether the client's
// writer had been flushed by then.
type spyChecker struct {
	client  *httptest.ResponseRecorder
	flushed []bool
	fed     string
}

func (s *spyChecker) Write(p []byte) (int, error) {
	s.flushed = append(s.flushed, s.client.Flushed)
	s.fed += string(p)
	return len(p), nil
}

func (s *spyChecker) WriteEvent(ev sse.Event) { s.Write(ev.Raw) }

func (s *spyChecker) Close() []schemas.Finding { return nil }

// newExchange is an exchange answering through w on its own (newServed's,
// with no request); recordMax as newServed's.
func newExchange(w http.ResponseWriter, recordMax int) *exchange {
	return &newServed(w, nil, recordMax).ex
}

// recordMax is newExchange's recordMax for an exchange recorded with a
// max_body that holds back none of its events, or not recorded.
func recordMax(recording bool) int {
	if recording {
		return maxEventBytes
	}
	return 0
}

// streamingExchange is an exchange that has started a chat completion's
// event stream to client.
func streamingExchange(client http.ResponseWriter, recording, hideUsage, check bool) *exchange {
	ex := newExchange(client, recordMax(recording))
	ex.operation = "chat.completions.create"
	ex.observe(hideUsage, check)
	ex.Header().Set("Content-Type", "text/event-stream")
	ex.WriteHeader(http.StatusOK)
	return ex
}

// TestStreamCheckRunsAfterFlush: a checked stream's events reach the
// client (written and flushed) before the reply check reads them, and the
// check reads every byte, the ones the end leaves unflushed included.
func TestStreamCheckRunsAfterFlush(t *testing.T) {
	for _, hideUsage := range []bool{false, true} {
		client := httptest.NewRecorder()
		ex := streamingExchange(client, false, hideUsage, true)
		spy := &spyChecker{client: client}
		ex.checker = spy
		first := "data: {\"id\":\"c\",\"choices\":[]}\n\n"
		ex.Write([]byte(first))
		if spy.fed != "" {
			t.Fatalf("hide usage %v: the check read %q before the event was flushed", hideUsage, spy.fed)
		}
		if client.Body.String() != first {
			t.Fatalf("hide usage %v: the client has %q", hideUsage, client.Body.String())
		}
		if err := http.NewResponseController(ex).Flush(); err != nil {
			t.Fatal(err)
		}
		if spy.fed != first || len(spy.flushed) != 1 || !spy.flushed[0] {
			t.Fatalf("hide usage %v: after the flush the check read %q (flushed before: %v)", hideUsage, spy.fed, spy.flushed)
		}
		last := "data: [DONE]\n\n"
		ex.Write([]byte(last))
		ex.finish()
		if spy.fed != first+last {
			t.Errorf("hide usage %v: at the end the check has read %q", hideUsage, spy.fed)
		}
	}
}

// TestStreamObservedAfterFlush: each event of a stream reaches the client
// before the exchange reads anything of it but whether it is a usage
// chunk to hide: its model, usage and record wait for the flush that sent
// it (or for the end), as the check does, so that this work never delays
// an event; the tail of a stream (its last chunks, usage chunk and
// [DONE], read at once from the upstream) leaves in one flush with none
// of it done first.
func TestStreamObservedAfterFlush(t *testing.T) {
	const chunk = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`
	const usageChunk = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m1","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`
	tail := "data: " + chunk + "\n\n" + "data: " + usageChunk + "\n\n" + "data: [DONE]\n\n"
	for _, hideUsage := range []bool{false, true} {
		client := httptest.NewRecorder()
		ex := streamingExchange(client, true, hideUsage, false)
		split := sse.Splitter{OnEvent: func(ev sse.Event) { ex.WriteEvent(ev) }}
		split.Write([]byte(tail))
		want := tail
		if hideUsage {
			want = "data: " + chunk + "\n\n" + "data: [DONE]\n\n"
		}
		if client.Body.String() != want {
			t.Fatalf("hide usage %v: the client has %q", hideUsage, client.Body.String())
		}
		if ex.replyModel != "" || len(ex.events()) != 0 || (ex.usage != nil) != hideUsage {
			t.Fatalf("hide usage %v: before the flush the exchange read model %q, events %q, usage %+v", hideUsage, ex.replyModel, ex.events(), ex.usage)
		}
		if err := http.NewResponseController(ex).Flush(); err != nil {
			t.Fatal(err)
		}
		events := []string{chunk, usageChunk, "[DONE]"}
		if hideUsage {
			events = []string{chunk, "[DONE]"}
		}
		if ex.replyModel != "m1" || !slices.Equal(ex.events(), events) || ex.usage == nil || ex.usage.total != 4 || len(ex.held) != 0 {
			t.Errorf("hide usage %v: after the flush the exchange read model %q, events %q, usage %+v, %d held", hideUsage, ex.replyModel, ex.events(), ex.usage, len(ex.held))
		}
	}
}

// observed is what an exchange made of a stream: the client's bytes, the
// recorded events, the usage and the reply check's findings.
type observed struct {
	client   string
	events   []string
	dropped  bool
	usage    *usage
	findings []schemas.Finding
}

// observeStream runs a stream through an exchange, fed by relay (Relay's
// split, the events whole) or else written in pieces cut at random.
func observeStream(t *testing.T, stream string, hideUsage, relay bool, rng *rand.Rand) observed {
	t.Helper()
	client := httptest.NewRecorder()
	ex := newExchange(client, maxEventBytes)
	ex.operation = "chat.completions.create"
	ex.observe(hideUsage, true)
	if relay {
		resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(strings.NewReader(stream))}
		if err := upstreams.Relay(ex, resp, 1<<20, ""); err != nil {
			t.Fatal(err)
		}
	} else {
		ex.Header().Set("Content-Type", "text/event-stream")
		ex.WriteHeader(http.StatusOK)
		for rest := stream; rest != ""; {
			n := min(len(rest), 1+rng.IntN(40))
			ex.Write([]byte(rest[:n]))
			rest = rest[n:]
			if rng.IntN(3) == 0 {
				http.NewResponseController(ex).Flush()
			}
		}
	}
	ex.finish()
	return observed{client.Body.String(), ex.events(), ex.eventsDropped, ex.usage, ex.checker.Close()}
}

// TestRelayedEventsObservedAsWrittenBytes: a stream relayed by Relay,
// which hands the exchange each event whole, is observed as the same
// stream written in any split: the same bytes to the client (the usage
// chunk hidden or not), events recorded, usage and findings.
func TestRelayedEventsObservedAsWrittenBytes(t *testing.T) {
	const head = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[`
	streams := map[string]string{
		"whole": "data: " + head + `{"index":0,"delta":{"content":"a"},"finish_reason":null}],"usage":null}` + "\n\n" +
			"data: " + head + `{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}` + "\n\n" +
			"data: " + head + `],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}` + "\n\n" +
			"data: [DONE]\n\n",
		"broken": ": keep-alive\n\n" +
			"data: " + head + `{"index":0,"delta":{"content":"a"},"finish_reason":"bogus"}]}` + "\r\n\r\n" +
			"event: error\ndata: {\"error\":{\"message\":\"x\"}}\n\n" +
			"data: {\"id\":\"c2\",\ndata: \"choices\":[]}\n\n" +
			"data: " + head + `],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}` + "\n\n" +
			"data: [DONE]\n\ndata: after the end",
	}
	rng := rand.New(rand.NewPCG(7, 21))
	for name, stream := range streams {
		for _, hideUsage := range []bool{false, true} {
			want := observeStream(t, stream, hideUsage, true, rng)
			if len(want.events) == 0 || want.usage == nil || (name == "broken") != (len(want.findings) > 0) {
				t.Fatalf("%s: nothing observed: %+v", name, want)
			}
			for range 20 {
				got := observeStream(t, stream, hideUsage, false, rng)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, hide usage %v: written in pieces\n%+v\nrelayed\n%+v", name, hideUsage, got, want)
				}
			}
		}
	}
}

// usageByGet reads a chunk's usage with a gjson Get for each path and
// member, as the exchange did before chunkUsage skipped chunks that
// cannot name usage and readUsage read the members in one pass: the
// oracle of both.
func usageByGet(data []byte) (*usage, bool) {
	if len(data) == 0 || data[0] != '{' {
		return nil, false
	}
	u := gjson.GetBytes(data, "usage")
	if !u.IsObject() {
		if u = gjson.GetBytes(data, "response.usage"); !u.IsObject() {
			return nil, false
		}
	}
	choices := gjson.GetBytes(data, "choices")
	return usageByMember(u), choices.IsArray() && len(choices.Array()) == 0
}

func usageByMember(u gjson.Result) *usage {
	return &usage{
		prompt:     upstreams.SumTokens(u.Get("prompt_tokens").Int(), u.Get("input_tokens").Int()),
		completion: upstreams.SumTokens(u.Get("completion_tokens").Int(), u.Get("output_tokens").Int()),
		total:      u.Get("total_tokens").Int(),
		cached:     u.Get("prompt_tokens_details.cached_tokens").Int() + u.Get("input_tokens_details.cached_tokens").Int(),
		reasoning:  u.Get("completion_tokens_details.reasoning_tokens").Int() + u.Get("output_tokens_details.reasoning_tokens").Int(),
		hasTotal:   u.Get("total_tokens").Exists(),
	}
}

// randomUsage is a usage object made at random: members repeated,
// escaped, of any JSON type.
func randomUsage(rng *rand.Rand) string {
	names := []string{"prompt_tokens", "completion_tokens", "total_tokens", "input_tokens", "output_tokens", `\u0070rompt_tokens`, "cached_tokens", "Prompt_tokens"}
	values := []string{"0", "7", "-3", "-0", "12.9", `"15"`, `"12.9"`, `"\u0031\u0032"`, `"x"`, "1e30", "1E400", "null", "true", "false",
		`{"a":1}`, "[1,2]", "999999999999999", "-999999999999999", "1000000000000001", "9223372036854775807", "9007199254740993", "99999999999999999999"}
	var b strings.Builder
	b.WriteString("{")
	for i := range rng.IntN(7) {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + names[rng.IntN(len(names))] + `": ` + values[rng.IntN(len(values))])
	}
	b.WriteString("}")
	return b.String()
}

// TestChunkUsageAgreesWithGet holds chunkUsage to usageByGet on chunks
// made at random of what a chunk may hold: usage null, absent, an object
// (members repeated, escaped, of any JSON type), in a response or under
// an escaped name, and the words themselves in the content.
func TestChunkUsageAgreesWithGet(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	usageObject := func() string { return randomUsage(rng) }
	members := []func() string{
		func() string { return `"usage":null` },
		func() string { return `"usage":` + usageObject() },
		func() string { return `"\u0075sage":` + usageObject() },
		func() string { return `"response":{"id":"r","usage":` + usageObject() + `}` },
		func() string { return `"response":{"id":"r"}` },
		func() string { return `"choices":[]` },
		func() string { return `"choices":[{"index":0,"delta":{"content":"usage response"}}]` },
		func() string { return `"id":"c","object":"chat.completion.chunk"` },
		func() string { return `"usage":[1]` },
		// For nullUsage: usage null written otherwise, or named by
		// escapes, inside strings, nested, or cut short by gjson.
		func() string { return "\"usage\" \t:\r\n null" },
		func() string { return `"usage": nul` },
		func() string { return `"usage":"null"` },
		func() string { return `"usage\q":` + usageObject() },
		func() string { return `"usage\:null":` + usageObject() },
		func() string { return `"usage\"":` + usageObject() },
		func() string { return `"usag\u0065":` + usageObject() },
		func() string { return `"usag\/e":` + usageObject() },
		func() string { return `"content":"\"usage\":null"` },
		func() string { return `"x\"usage":null` },
		func() string { return `"choices":[{"index":0,"usage":null}]` },
		func() string { return `"usagex":` + usageObject() },
		func() string { return `"Usage":` + usageObject() },
	}
	nullUsages := 0
	for range 20000 {
		var b strings.Builder
		b.WriteString("{")
		for i := range rng.IntN(5) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(members[rng.IntN(len(members))]())
		}
		b.WriteString("}")
		data := []byte(b.String())
		gotUsage, gotOnly := chunkUsage(data)
		wantUsage, wantOnly := usageByGet(data)
		if !reflect.DeepEqual(gotUsage, wantUsage) || gotOnly != wantOnly {
			t.Fatalf("%s: chunkUsage gives %+v, %v; Get gives %+v, %v", data, gotUsage, gotOnly, wantUsage, wantOnly)
		}
		if i := bytes.Index(data, []byte("usage")); i >= 0 && !bytes.Contains(data, []byte(`\u`)) && nullUsage(data, i) {
			nullUsages++
		}
	}
	if nullUsages < 1000 {
		t.Fatalf("nullUsage decided only %d chunks", nullUsages)
	}
}

// TestCheckedReplyUsageAgreesWithGet: a checked JSON reply's usage, read
// from the document the check decoded, is what a gjson Get for each member
// reads of its bytes (as an unchecked reply's is), its model the one
// replyModel reads of its bytes (the scan's, for a reply scanned), and its
// findings are ValidateResponse's, whether finish checks it or a strict
// check did before sending it; replies made at random, their usage as in
// TestChunkUsageAgreesWithGet, their model escaped or not, some with a
// member named twice.
func TestCheckedReplyUsageAgreesWithGet(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	models := []string{`"m"`, `"gpt-4o"`, `"gpt\u002d4o\/mini"`, `"m\\\"x"`, `"caf\u00e9"`, `"m\ud83d\ude00"`, `null`, `1`}
	members := []func() string{
		func() string { return `"usage":` + randomUsage(rng) },
		func() string { return `"\u0075sage":` + randomUsage(rng) },
		func() string { return `"usage":null` },
		func() string { return `"usage":[1]` },
		func() string { return `"system_fingerprint":"fp"` },
		func() string { return `"response":{"usage":` + randomUsage(rng) + `}` },
		func() string { return `"usage":` + countedUsage(rng) },
	}
	op, _ := operationByID(upstreams.OpChatCompletionsCreate)
	var fromDoc, conforming, scanned, strictScanned int
	for range 5000 {
		var b strings.Builder
		b.WriteString(`{"id":"c","object":"chat.completion","created":1,"model":` + models[rng.IntN(len(models))] +
			`,"choices":[{"index":0,"message":{"role":"assistant","content":"usage"},"finish_reason":"stop"}]`)
		for range rng.IntN(3) {
			b.WriteString(", " + members[rng.IntN(len(members))]())
		}
		b.WriteString("}")
		body := []byte(b.String())
		ex := finishCheckedReply(op.ID, body, false)

		var want *usage
		if u := gjson.GetBytes(body, "usage"); u.IsObject() {
			want = usageByMember(u)
		}
		if !reflect.DeepEqual(ex.usage, want) {
			t.Fatalf("%s: usage %+v, Get reads %+v", body, ex.usage, want)
		}
		if model := replyModel(body); ex.captureModel != model {
			t.Fatalf("%s: model %q, replyModel reads %q", body, ex.captureModel, model)
		}
		// The schema's findings come in no set order.
		_, findings := schemas.ValidateResponse(op.ID, body)
		if !slices.Equal(sortedFindings(ex.replyFindings), sortedFindings(findings)) {
			t.Fatalf("%s: findings %q, ValidateResponse finds %q", body, ex.replyFindings, findings)
		}
		if doc, _ := schemas.CheckResponse(op.ID, body); doc != nil && want != nil {
			fromDoc++
		}
		if u, _, ok := schemas.ScanResponse(op.ID, body); ok && u != nil {
			scanned++
		}
		if len(findings) == 0 {
			conforming++
			// A strict check, made before sending, is not made again.
			strict, err := strictlyChecked(op.ID, body)
			if err != nil {
				t.Fatalf("%s: strict check: %v", body, err)
			}
			if !reflect.DeepEqual(strict.usage, want) || len(strict.replyFindings) > 0 || strict.checkedBody == nil ||
				strict.captureModel != replyModel(body) {
				t.Fatalf("%s: strictly checked, usage %+v (Get reads %+v), model %q, findings %q", body, strict.usage, want, strict.captureModel, strict.replyFindings)
			}
			if strict.checked.scanned {
				strictScanned++ // checked from its bytes, not decoded
			}
		}
	}
	if fromDoc < 400 || conforming < 1000 || scanned < 100 || strictScanned < 100 {
		t.Fatalf("generator too weak: %d usages read from the document, %d from the scan, %d replies conform, %d strictly checked by the scan", fromDoc, scanned, conforming, strictScanned)
	}
	t.Logf("%d usages read from the document, %d from the scan, %d replies conform, %d strictly checked by the scan", fromDoc, scanned, conforming, strictScanned)
}

// countedUsage is a usage object with the three counts a chat completion's
// must have, of integers from 0 up to past what an int64 holds, and now
// and then a member of randomUsage's more.
func countedUsage(rng *rand.Rand) string {
	counts := []string{"0", "-0", "7", "999999999999999", "1000000000000001", "9007199254740993", "9223372036854775807", "99999999999999999999"}
	count := func() string { return counts[rng.IntN(len(counts))] }
	extra := ""
	if more := randomUsage(rng); rng.IntN(2) == 0 && len(more) > 2 {
		extra = "," + more[1:len(more)-1]
	}
	return `{"prompt_tokens":` + count() + `,"completion_tokens":` + count() + `,"total_tokens":` + count() + extra + `}`
}

// finishCheckedReply observes a JSON reply of operation with the check on,
// as relay sets the exchange up, to its finish.
func finishCheckedReply(operation string, body []byte, recording bool) *exchange {
	ex := newExchange(httptest.NewRecorder(), recordMax(recording))
	ex.operation = operation
	ex.observe(false, true)
	ex.Header().Set("Content-Type", "application/json")
	ex.WriteHeader(http.StatusOK)
	ex.Write(body)
	ex.finish()
	return ex
}

// strictlyChecked is body relayed through a strict route's check, which
// holds it until it is found to conform, and finished.
func strictlyChecked(operation string, body []byte) (*exchange, error) {
	op, _ := operationByID(operation)
	ex := newExchange(httptest.NewRecorder(), 0)
	ex.operation = operation
	ex.observe(false, true)
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(body))}
	if err := new(Gateway).relayChecked(ex, &request{op: op}, resp); err != nil {
		return nil, err
	}
	ex.finish()
	return ex, nil
}

func sortedFindings(findings []schemas.Finding) []string {
	var s []string
	for _, f := range findings {
		s = append(s, f.String())
	}
	slices.Sort(s)
	return s
}

// TestExchangeWriterIsNoAllocation: ReadFrom hands io.CopyBuffer the
// exchange as a Writer alone (writerOnly) without an allocation a reply.
func TestExchangeWriterIsNoAllocation(t *testing.T) {
	ex := newExchange(httptest.NewRecorder(), 0)
	var w io.Writer
	if n := testing.AllocsPerRun(100, func() { w = writerOnly{ex} }); n != 0 {
		t.Fatalf("%v allocations to make the exchange a Writer", n)
	}
	if _, ok := w.(io.ReaderFrom); ok {
		t.Fatal("the exchange as a Writer alone has a ReadFrom, which io.CopyBuffer would call instead of Write")
	}
}
