package schemas

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// replyScanAgrees: scanCompletion accepts only replies that CheckResponse
// decodes with its parser and finds conforming by its fast path, and the
// usage it returns is the bytes of the decoded reply's usage object, its
// model those of the decoded reply's model. It reports whether the scan
// and the fast path took data.
func replyScanAgrees(t *testing.T, data []byte) (scanned, decoded bool) {
	t.Helper()
	usage, model, scanned := ScanResponse("chat.completions.create", data)
	doc, ok := parseObject(data)
	decoded = ok && conforms("chat.completions.create.response.json", doc)
	if scanned && !decoded {
		t.Fatalf("scanCompletion accepts a reply the fast path does not: %s", data)
	}
	if !scanned {
		return false, decoded
	}
	if parsed, findings := CheckResponse("chat.completions.create", data); parsed == nil || len(findings) > 0 {
		t.Fatalf("scanCompletion accepts a reply CheckResponse finds %v in: %s", findings, data)
	}
	if got, ok := parseObject(slices.Concat([]byte(`{"m":`), model, []byte("}"))); !ok || got["m"] != doc["model"] {
		t.Fatalf("scanCompletion reads model %q, the document's is %q: %s", model, doc["model"], data)
	}
	want, hasUsage := doc["usage"]
	if hasUsage != (usage != nil) {
		t.Fatalf("scanCompletion reads usage %q, the document's is %v: %s", usage, want, data)
	}
	if usage != nil {
		got, ok := parseObject(usage)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Fatalf("scanCompletion reads usage %q, the document's is %v: %s", usage, want, data)
		}
	}
	return true, true
}

// replyVariants are chunkVariants' edits and those of a reply's own
// members: its message, role, finish_reason, usage and fingerprint.
func replyVariants(g gen, data []byte) [][]byte {
	out := chunkVariants(g, data)
	for _, edit := range [][2]string{
		{`"message":{`, `"message":{"x":1,"x":2,`}, {`"message":{`, `"message":{"annotations":[],"audio":null,`},
		{`"role":"assistant"`, `"role":"assist\u0061nt"`}, {`"role":"assistant"`, `"role":"user"`}, {`"role":"assistant",`, ``},
		{`"content":"hi"`, `"content":null`}, {`"content":"hi",`, ``}, {`"refusal":null`, `"refusal":"no"`}, {`"refusal":null`, `"refusal":1`},
		{`"finish_reason":"stop"`, `"finish_reason":null`}, {`"finish_reason":"stop"`, `"finish_reason":"done"`}, {`"finish_reason":"stop",`, ``},
		{`"logprobs":null`, `"logprobs":{"content":[]}`}, {`"chat.completion"`, `"chat.completion\/"`}, {`"object":"chat.completion",`, ``},
		{`"system_fingerprint":null`, `"system_fingerprint":"fp"`}, {`"system_fingerprint":null`, `"system_fingerprint":1`},
		{`"usage":{`, `"usage":null,"u":{`}, {`"usage":{`, `"usage": {`}, {`"total_tokens":3`, `"total_tokens":3,"input_tokens":5,"output_tokens":6`},
		{`"total_tokens":3`, `"total_tokens":1000000000000000`}, {`"total_tokens":3`, `"total_tokens":"3"`}, {`"prompt_tokens":1,`, ``},
		{`"model":"gpt-4o-mini"`, `"model":"gpt-4o-m\u0069n\/i\\"`}, {`"model":"gpt-4o-mini"`, `"model": "gpt-4o-mini"`},
		{`"model":"gpt-4o-mini"`, `"model":null`}, {`"model":"gpt-4o-mini"`, `"model":"m\ud83d\ude00"`},
		{`"choices":[`, `"choices":[],"x":[`}, {`"message":{`, `"message":{"nested":` + strings.Repeat("{\"a\":", 40) + "1" + strings.Repeat("}", 40) + `,`},
	} {
		if bytes.Contains(data, []byte(edit[0])) {
			out = append(out, bytes.Replace(data, []byte(edit[0]), []byte(edit[1]), 1))
		}
	}
	return out
}

// TestReplyScanAgreesWithTheFastPath: on generated chat completions, valid
// and broken, each written in many ways, scanCompletion accepts only what
// CheckResponse's fast path accepts, with its usage; and of those written
// as json.Marshal writes them, or indented, it takes every one without
// tool calls (which it leaves to the decoding path) that the fast path
// takes.
func TestReplyScanAgreesWithTheFastPath(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(21, 9))}
	var scanned, decoded, all int
	for i := range 3000 {
		for k, data := range replyVariants(g, g.mostlyBroken(t, i, g.reply())) {
			s, d := replyScanAgrees(t, data)
			if k >= 2 || bytes.Contains(data, []byte("tool_calls")) {
				continue // escaped names, deep nesting and tool calls go to the decoder by design
			}
			all++
			if s {
				scanned++
			}
			if d {
				decoded++
			}
		}
	}
	t.Logf("%d replies without tool calls, compact or indented; %d taken by the fast path, %d of them by scanCompletion", all, decoded, scanned)
	if scanned < decoded || decoded < all/5 {
		t.Fatalf("scanCompletion takes %d of %d; the generator gave %d", scanned, decoded, all)
	}
	if _, _, ok := ScanResponse("chat.completions.create", []byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)); !ok {
		t.Error("a reply without usage is not taken")
	}
	if _, _, ok := ScanResponse("embeddings.create", []byte(`{"object":"list","data":[]}`)); ok {
		t.Error("a reply of another operation is taken")
	}
}

// FuzzReplyScan: whatever the data, scanCompletion accepts only what
// CheckResponse's fast path accepts, with its usage. The seed corpus runs
// with the ordinary tests.
func FuzzReplyScan(f *testing.F) {
	g := gen{rand.New(rand.NewPCG(21, 10))}
	addScanSeeds(f, g, g.reply, replyVariants)
	f.Fuzz(func(t *testing.T, data []byte) {
		replyScanAgrees(t, data)
	})
}
