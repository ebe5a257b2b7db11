package record

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// referenceRecordLine is how records were written before Encoder:
// encoding/json, the bodies that are not JSON as text, or base64 when not
// UTF-8. Encoder must write the same bytes, but for its one rule of its
// own: invalid UTF-8 inside a JSON body, which encoding/json copies as is,
// is written as \ufffd byte by byte (as encoding/json writes any other
// string's), and every part where anything was replaced is named in
// invalid_utf8.
func referenceRecordLine(t testing.TB, rec *Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	want := *rec
	want.Request.Content = referenceAsText(rec.Request.Content)
	want.Response.Content = referenceAsText(rec.Response.Content)
	want.InvalidUTF8 = nil
	invalid := func(name string, texts ...string) {
		for _, s := range texts {
			if !utf8.ValidString(s) {
				want.InvalidUTF8 = append(want.InvalidUTF8, name)
				return
			}
		}
	}
	headerTexts := func(h http.Header) (texts []string) {
		for name, values := range h {
			texts = append(append(texts, name), values...)
		}
		return texts
	}
	bodyTexts := func(c *Content) []string {
		texts := []string{string(c.Body), c.BodyText, c.BodyBase64}
		c.Body = replaceInvalidUTF8(c.Body)
		return texts
	}
	invalid("operation", rec.Operation)
	invalid("key_name", rec.KeyName)
	invalid("upstream", rec.Upstream)
	invalid("request.method", rec.Request.Method)
	invalid("request.path", rec.Request.Path)
	invalid("request.query", rec.Request.Query)
	invalid("request.header", headerTexts(rec.Request.Header)...)
	invalid("request.body", bodyTexts(&want.Request.Content)...)
	invalid("response.header", headerTexts(rec.Response.Header)...)
	invalid("response.body", bodyTexts(&want.Response.Content)...)
	invalid("response.events", rec.Response.Events...)
	invalid("findings", rec.Findings...)
	if err := enc.Encode(want); err != nil {
		t.Fatalf("reference encoding: %v", err)
	}
	return buf.Bytes()
}

// replaceInvalidUTF8 writes each byte of b that is not UTF-8 as the escape
// \ufffd. In JSON (valid by json.Valid's rules) such bytes are all inside
// strings.
func replaceInvalidUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	var out []byte
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = append(out, `\ufffd`...)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

func referenceAsText(b Content) Content {
	switch {
	case len(b.Body) == 0 || json.Valid(b.Body):
		return b
	case utf8.Valid(b.Body):
		return Content{BodyText: string(b.Body), Truncated: b.Truncated}
	}
	return Content{BodyBase64: base64.StdEncoding.EncodeToString(b.Body), Truncated: b.Truncated}
}

func checkRecordLine(t testing.TB, rec *Record) {
	t.Helper()
	var enc Encoder
	got := enc.Append([]byte("prefix"), rec)
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("Append changed what was before it: %q", got)
	}
	line := got[len("prefix"):]
	if want := referenceRecordLine(t, rec); !bytes.Equal(line, want) {
		t.Fatalf("record %#v\n got %q\nwant %q", rec, line, want)
	}
	if !utf8.Valid(line) || !json.Valid(line) {
		t.Fatalf("record %#v: line %q is not UTF-8 JSON", rec, line)
	}
}

// pieces of strings: HTML characters, separators, controls, invalid UTF-8.
var oddPieces = []string{
	"", "a", "Content-Type", "x-ratelimit-remaining-requests", " ", "<", ">", "&", `"`, `\`, "/",
	"\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "é", "日本", "😀", "\u2028", "\u2029",
	"\xe2\x80", "\xe2\x80\xa8", "\xe2\x80\xaa", "\xff", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\ufffd",
	`\u0041`, "[redacted]", "application/json; charset=utf-8",
}

func oddString(r *rand.Rand) string {
	var sb strings.Builder
	for range r.IntN(5) {
		sb.WriteString(oddPieces[r.IntN(len(oddPieces))])
	}
	return sb.String()
}

// jsonBodies are valid JSON with space to drop, HTML characters and
// separators to escape, and invalid UTF-8 inside strings (which JSON
// allows and encoding/json copies).
var jsonBodies = []string{
	`{}`, `[]`, `null`, `0`, `-0.5e+10`, `1E-7`, `"s"`, ` { "a" : [ 1 , 2.50 , true , false , null ] } `,
	"{\"html\":\"<b>&amp;</b>\",\"sep\":\"\u2028\u2029\",\"bad\":\"\xff\xe2\x80\"}",
	`{"escaped":"\u003c\"\\\/\b\f\n\r\t\uABCD","nested":{"a":{"b":[[[{}]]]}}}`,
	"\t\r\n[\n  {\"k\": \"v\"}\n]\n",
	`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"temperature":0.7}`,
	"{\n  \"model\": \"gpt-4o-mini\",\n  \"n\": [1, 2]\n}\n", `{"s":"a b, c: d"}`,
}

// notJSONBodies are not JSON; some are UTF-8 (recorded as text), some
// not (base64).
var notJSONBodies = []string{
	"--boundary\r\nnot json", `{"a":1`, `{"a":1}}`, `{"a" 1}`, `[1,]`, `{,}`, `01`, `-`, `1.`, `1e`, `.5`,
	`tru`, `nul`, `"unterminated`, "\"ctrl\x01\"", `"\x"`, `"\u12G4"`, `{"a":1}x`, `[1 2]`, "\xff\xd8\xff\xe0 jpeg",
	"plain <text> & more \u2028", `{'a':1}`, `NaN`, `+1`, "\"\\u123\"",
	"{\"a\":\"tab\tin a string\"}", "{\n\"a\":\"line\nin a string\"}", `{"a":"unterminated}`, `{"a":"b"`,
}

func randomBody(r *rand.Rand) Content {
	var b Content
	switch r.IntN(6) {
	case 0:
	case 1, 2:
		b.Body = json.RawMessage(jsonBodies[r.IntN(len(jsonBodies))])
	case 3:
		b.Body = json.RawMessage(notJSONBodies[r.IntN(len(notJSONBodies))])
	case 4:
		b.Body = json.RawMessage(oddString(r))
	case 5:
		b.Body = json.RawMessage{}
	}
	if r.IntN(4) == 0 {
		b.BodyText = oddString(r)
	}
	if r.IntN(6) == 0 {
		b.BodyBase64 = base64.StdEncoding.EncodeToString([]byte(oddString(r)))
	}
	b.Truncated = r.IntN(3) == 0
	b.Parsed = json.Valid(b.Body) && utf8.Valid(b.Body) && r.IntN(2) == 0
	return b
}

func randomHeader(r *rand.Rand) http.Header {
	switch r.IntN(5) {
	case 0:
		return nil
	case 1:
		return http.Header{}
	}
	h := http.Header{}
	n := r.IntN(8)
	if r.IntN(8) == 0 {
		n = 17 + r.IntN(16) // more than sortFields sorts by insertion, and than AppendHeader's room
	}
	for range n {
		var values []string
		switch r.IntN(4) {
		case 0: // nil: null
		case 1:
			values = []string{}
		default:
			for range 1 + r.IntN(3) {
				values = append(values, oddString(r))
			}
		}
		h[oddString(r)] = values
	}
	return h
}

func randomStrings(r *rand.Rand) []string {
	switch r.IntN(4) {
	case 0:
		return nil
	case 1:
		return []string{}
	}
	list := make([]string, 1+r.IntN(4))
	for i := range list {
		list[i] = oddString(r)
	}
	return list
}

var oddFloats = []float64{0, 1, -1, 0.001, 12.345, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, 1.2345e22, -3e-8, math.SmallestNonzeroFloat64, math.MaxFloat64}

func randomRecord(r *rand.Rand) *Record {
	zones := []*time.Location{time.UTC, time.FixedZone("", 5*3600+30*60), time.FixedZone("", -8*3600)}
	rec := &Record{
		Time:      time.Unix(r.Int64N(4e9), r.Int64N(1e9)*int64(r.IntN(2))).In(zones[r.IntN(len(zones))]),
		Operation: oddString(r),
		KeyName:   oddString(r),
		Upstream:  oddString(r),
		Request: Request{
			Method: oddString(r), Path: oddString(r), Query: oddString(r),
			Header: randomHeader(r), Content: randomBody(r),
		},
		Status:   r.IntN(1000) - 1,
		Response: Response{Header: randomHeader(r), Content: randomBody(r), Events: randomStrings(r)},
		Findings: randomStrings(r),
	}
	rec.LatencyMS = oddFloats[r.IntN(len(oddFloats))]
	if r.IntN(2) == 0 {
		rec.LatencyMS = r.Float64() * 1000
	}
	if r.IntN(2) == 0 {
		rec.FirstByteMS = oddFloats[r.IntN(len(oddFloats))]
	}
	if r.IntN(2) == 0 {
		rec.CostUSD, rec.Unpriced = strconv.FormatFloat(r.Float64(), 'f', -1, 64), r.IntN(2) == 0
	}
	return rec
}

// TestRecordEncoderMatchesEncodingJSON compares Encoder with
// encoding/json over many generated records.
func TestRecordEncoderMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		checkRecordLine(t, randomRecord(r))
	}
	checkRecordLine(t, &Record{})
}

// TestCompactJSONMatchesEncodingJSON: bodies, valid or not, and nesting at
// encoding/json's depth limit and past it.
func TestCompactJSONMatchesEncodingJSON(t *testing.T) {
	bodies := append(append([]string{}, jsonBodies...), notJSONBodies...)
	for _, depth := range []int{maxJSONDepth - 1, maxJSONDepth, maxJSONDepth + 1} {
		bodies = append(bodies, strings.Repeat("[", depth)+strings.Repeat("]", depth),
			strings.Repeat(`{"a":`, depth)+"1"+strings.Repeat("}", depth))
	}
	for _, body := range bodies {
		checkCompactJSON(t, []byte(body))
	}
}

func checkCompactJSON(t testing.TB, src []byte) {
	t.Helper()
	got, ok, replaced := appendCompactJSON(nil, src)
	if valid := json.Valid(src); ok != valid {
		t.Fatalf("%q: appendCompactJSON says valid %v, json.Valid %v", src, ok, valid)
	}
	if !ok {
		return
	}
	if replaced == utf8.Valid(src) {
		t.Fatalf("%q: replaced %v, but utf8.Valid %v", src, replaced, utf8.Valid(src))
	}
	if !utf8.Valid(got) {
		t.Fatalf("%q: wrote %q, not UTF-8", src, got)
	}
	want, err := json.Marshal(json.RawMessage(replaceInvalidUTF8(src)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%q:\n got %q\nwant %q", src, got, want)
	}
	if utf8.Valid(src) {
		if parsed, ok := appendParsedJSON(nil, src); ok && !bytes.Equal(parsed, want) {
			t.Fatalf("%q: appendParsedJSON\n got %q\nwant %q", src, parsed, want)
		}
	}
}

// TestParsedJSONIsCopied: a parsed body with nothing to change is copied
// by appendParsedJSON (checkCompactJSON checks what it writes against
// encoding/json); one with space between tokens, a character to escape
// or a byte 0xE2 is left to appendCompactJSON.
func TestParsedJSONIsCopied(t *testing.T) {
	copied := []string{
		`{}`, `0`, `"s p a c e"`, `{"a":"x\"y\\","b":["\\\"",1.5e3,true,null],"c":"é, : [ ]"}`,
		string(benchRecord("The quick brown fox jumps over the lazy dog. ").Request.Body),
	}
	for _, body := range copied {
		checkCompactJSON(t, []byte(body))
		if _, ok := appendParsedJSON(nil, []byte(body)); !ok {
			t.Errorf("%q: not copied", body)
		}
	}
	left := []string{
		` {}`, `{} `, `{"a": 1}`, `{"a":1 }`, "[1,\n2]", "{\"a\":\"\\\\\"\t}", `"<"`, `{"a":"&"}`,
		"\"\u2028\"", "\"\u2019\"", `{"a":"x\"}`, `"open`, `{"a":"x\"", "b":1}`, `["\\\"", 1]`,
	}
	for _, body := range left {
		if got, ok := appendParsedJSON(nil, []byte(body)); ok {
			t.Errorf("%q: copied as %q", body, got)
		}
	}
}

// FuzzRecordEncoder: go test -fuzz FuzzRecordEncoder ./module
func FuzzRecordEncoder(f *testing.F) {
	for _, b := range append(append([]string{}, jsonBodies...), notJSONBodies...) {
		f.Add([]byte(b), "text", "X-Name")
	}
	f.Fuzz(func(t *testing.T, body []byte, text, name string) {
		checkCompactJSON(t, body)
		checkRecordLine(t, &Record{
			Operation: text,
			Request: Request{Method: text, Path: name, Header: http.Header{name: {text, name}, text: nil},
				Content: Content{Body: body, BodyText: text}},
			Response: Response{Content: Content{Body: json.RawMessage(text), Truncated: true}, Events: []string{text, name}},
			Findings: []string{name},
		})
	})
}

// TestRecordsAreAlwaysUTF8: invalid UTF-8 from a client or an upstream,
// in a JSON body's strings, a path, a header or a stream event, is written
// as \ufffd, and the record names where. (Before, a JSON body's invalid
// bytes were copied into the line, which then was not UTF-8, and nothing
// said so.)
func TestRecordsAreAlwaysUTF8(t *testing.T) {
	rec := &Record{
		Operation: "chat.completions",
		Request: Request{Method: "POST", Path: "/v1/chat/\xff", Header: http.Header{"X-Note": {"caf\xe9"}},
			Content: Content{Body: json.RawMessage("{\"messages\":[{\"content\":\"caf\xe9 \xe2\x80 ok\"}]}")}},
		Status: 200,
		Response: Response{Content: Content{Body: json.RawMessage("{\"text\":\"\xc3\"}")},
			Events: []string{"{\"delta\":\"\xff\"}", "[DONE]"}},
	}
	var enc Encoder
	line := enc.Append(nil, rec)
	if !utf8.Valid(line) {
		t.Fatalf("line is not UTF-8: %q", line)
	}
	var got Record
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatal(err)
	}
	if want := []string{"request.path", "request.header", "request.body", "response.body", "response.events"}; !slices.Equal(got.InvalidUTF8, want) {
		t.Errorf("invalid_utf8 = %q, want %q", got.InvalidUTF8, want)
	}
	if want := "{\"messages\":[{\"content\":\"caf\\ufffd \\ufffd\\ufffd ok\"}]}"; string(got.Request.Body) != want {
		t.Errorf("request body %s, want %s", got.Request.Body, want)
	}
	// A record that was UTF-8 throughout says nothing.
	line = enc.Append(nil, &Record{Operation: "models.list", Request: Request{Content: Content{Body: json.RawMessage(`{"a":"é"}`)}}})
	if bytes.Contains(line, []byte("invalid_utf8")) {
		t.Errorf("a UTF-8 record names invalid parts: %s", line)
	}
}

// TestTruncatedBodies: a body cut at the recorder's limit is text when it
// is UTF-8 (a rune cut in two dropped), base64 when not.
func TestTruncatedBodies(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Content
	}{
		{"hello", Content{BodyText: "hello", Truncated: true}},
		{"price 3\xe2\x82", Content{BodyText: "price 3", Truncated: true}},
		{"\xff\xd8\xff\xe0", Content{BodyBase64: base64.StdEncoding.EncodeToString([]byte("\xff\xd8\xff\xe0")), Truncated: true}},
		{"ok\xffok", Content{BodyBase64: base64.StdEncoding.EncodeToString([]byte("ok\xffok")), Truncated: true}},
		{"", Content{Truncated: true}},
	} {
		if got := Truncated([]byte(c.in)); got.BodyText != c.want.BodyText || got.BodyBase64 != c.want.BodyBase64 || !got.Truncated {
			t.Errorf("Truncated(%q) = %#v, want %#v", c.in, got, c.want)
		}
	}
}

// TestThousandthsMatchEncodingJSON: a whole number of thousandths, as a
// record's milliseconds are, is written as encoding/json writes its float,
// within maxThousandths and past it, and so is a float near one.
func TestThousandthsMatchEncodingJSON(t *testing.T) {
	check := func(f float64) {
		t.Helper()
		want, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONFloat(nil, f); string(got) != string(want) {
			t.Fatalf("%v: got %s, want %s", f, got, want)
		}
	}
	r := rand.New(rand.NewPCG(9, 10))
	for _, m := range []int64{1, 9, 10, 99, 100, 999, 1000, 1001, 1010, 1100, 12345, 999999999999999, 1e15, 1e15 + 1, 1<<53 - 1, 1 << 53} {
		check(float64(m) / 1000)
		check(-float64(m) / 1000)
	}
	for range 200000 {
		m := r.Int64N(1 << (1 + r.IntN(62)))
		f := float64(m) / 1000
		check(f)
		check(-f)
		check(math.Nextafter(f, math.Inf(1)))
	}
	check(maxThousandths)
	check(math.Nextafter(maxThousandths, 0))
}
