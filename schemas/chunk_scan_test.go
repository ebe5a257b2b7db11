package schemas

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// decodedChunk is what the decoding path finds of a chunk: whether it
// takes the fast path (parses, has no error, chatChunkConforms) and, when
// it does, what chunkOf reads of it.
func decodedChunk(data []byte) (*trackedChunk, bool) {
	doc, ok := parseObject(data)
	if !ok || doc["error"] != nil || !definitionConforms(chunkDefinition, doc) {
		return nil, false
	}
	return chunkOf(doc), true
}

// scanAgrees: scanChunk accepts only chunks the decoding path's fast path
// accepts, and reads of them what chunkOf reads.
func scanAgrees(t *testing.T, data []byte) (scanned, decoded bool) {
	t.Helper()
	var got trackedChunk
	scanned = scanChunk(data, &got)
	want, decoded := decodedChunk(data)
	if scanned && !decoded {
		t.Fatalf("scanChunk accepts a chunk the fast path does not: %s", data)
	}
	if scanned && (!bytes.Equal(got.id, want.id) || got.usage != want.usage || got.choiceCount != want.choiceCount ||
		!slices.Equal(got.choices, want.choices)) {
		t.Fatalf("scanChunk reads %+v, chunkOf %+v: %s", got, *want, data)
	}
	return scanned, decoded
}

// chunkVariants are data written otherwise: with whitespace between
// tokens, a member name or value escaped, a member named twice, text
// escaped in its content, members the schema does not name.
func chunkVariants(g gen, data []byte) [][]byte {
	var indented bytes.Buffer
	json.Indent(&indented, data, " \r", "\t\n")
	out := [][]byte{data, indented.Bytes()}
	for _, edit := range [][2]string{
		{`"id":`, `"i\u0064":`}, {`"id":"chatcmpl-1"`, `"id":"chat\u0063mpl-1"`}, {`"id":"chatcmpl-1"`, "\"id\":\"c\xff\""}, {`"index":`, `"\u0069ndex":`}, {`"usage":`, `"usag\u0065":`},
		{`{"id":`, `{"id":"other","id":`}, {`"index":0,`, `"index":0,"index":1,`}, {`"delta":{`, `"delta":{"x":1,"x":2,`},
		{`"hi"`, `"h\"\\\/\b\f\n\r\t\u00e9\u4e2di"`}, {`"hi"`, `"h\ud83d\ude00"`}, {`"hi"`, `"h\x"`}, {`"hi"`, "\"h\x01\""},
		{`"hi"`, "\"h\xff\""}, {`"hi"`, `"héllo"`}, {`"stop"`, `"st\u006fp"`}, {`"chat.completion.chunk"`, `"chat.completion.chunk\/"`},
		{`{"id":`, `{"system_fingerprint":"fp","service_tier":"default","obfuscation":"x\ny","id":`},
		{`{"id":`, `{"error":null,"id":`}, {`{"id":`, `{"error":{"message":"m"},"id":`},
		{`"logprobs":null`, `"logprobs":{"content":null}`}, {`"finish_reason":null`, `"finish_reason":null,"extra":[1,{"a":[true,false,null,-0.5e3]}]`},
		{`"total_tokens":3`, `"total_tokens":3,"prompt_tokens_details":{"cached_tokens":0,"cached_tokens":1}`},
		{`"total_tokens":3`, `"total_tokens":3,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0}`},
		{`"created":1741569952`, `"created":-0`}, {`"index":0`, `"index":-0`}, {`"index":0`, `"index":9223372036854775808`},
		{`"index":0`, `"index":00`}, {`"created":1741569952`, `"created":1.0`}, {`"index":0`, `"index":1e2`}, {`"index":0`, `"index":-`},
		{`"index":0`, `"index":999999999999999999`}, {`"index":0`, `"index":1000000000000000000`}, {`"created":1741569952`, `"created":-17`}, {`"delta":{`, `"delta":{"nested":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `,`},
	} {
		if bytes.Contains(data, []byte(edit[0])) {
			out = append(out, bytes.Replace(data, []byte(edit[0]), []byte(edit[1]), 1))
		}
	}
	if len(data) > 2 {
		cut := 1 + g.pick(len(data)-1)
		out = append(out, data[:cut], append(slices.Clone(data), ` x`...))
	}
	return out
}

// TestChunkScanAgreesWithTheFastPath: on generated chunks, valid and
// broken, and each written in many ways, scanChunk accepts only what the
// decoding path's fast path accepts and reads what chunkOf reads; and of
// those written as json.Marshal writes them, or indented, it takes every
// one that path takes.
func TestChunkScanAgreesWithTheFastPath(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(21, 7))}
	var scanned, decoded int
	for i := range 3000 {
		for k, data := range chunkVariants(g, g.mostlyBroken(t, i, g.chunk())) {
			s, d := scanAgrees(t, data)
			if k >= 2 {
				continue // escaped names and deep nesting go to the decoder by design
			}
			if s {
				scanned++
			}
			if d {
				decoded++
			}
		}
	}
	t.Logf("%d chunks, compact or indented, taken by the decoding fast path, %d of them by scanChunk", decoded, scanned)
	if scanned < decoded {
		t.Fatalf("scanChunk takes only %d of %d", scanned, decoded)
	}
	for _, typical := range []string{
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","service_tier":"default","choices":[{"index":0,"delta":{"content":"Hi \"there\"\n"},"logprobs":null,"finish_reason":null}],"obfuscation":"a1"}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3,"prompt_tokens_details":{"cached_tokens":0}}}`,
	} {
		if s, _ := scanAgrees(t, []byte(typical)); !s {
			t.Errorf("scanChunk does not take %s", typical)
		}
	}
}

// FuzzChunkScan: whatever the data, scanChunk accepts only what the
// decoding path's fast path accepts, and reads what chunkOf reads. The
// seed corpus runs with the ordinary tests.
func FuzzChunkScan(f *testing.F) {
	g := gen{rand.New(rand.NewPCG(21, 8))}
	addScanSeeds(f, g, g.chunk, chunkVariants)
	f.Fuzz(func(t *testing.T, data []byte) {
		scanAgrees(t, data)
	})
}

// addScanSeeds seeds f with the variants of documents made by doc: those
// of every fourth of 20 (the generators draw for all 20).
func addScanSeeds(f *testing.F, g gen, doc func() map[string]any, variants func(gen, []byte) [][]byte) {
	for i := range 20 {
		body, _ := json.Marshal(doc())
		for _, data := range variants(g, body) {
			if i%4 == 0 {
				f.Add(data)
			}
		}
	}
}
