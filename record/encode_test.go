package record

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// referenceRecordLine is how records were written before Encoder:
// encoding/json, and on failure again with the bodies that are not JSON as
// text, or base64 when not UTF-8. Encoder must write the same bytes.
func referenceRecordLine(t testing.TB, rec *Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(rec); err == nil {
		return buf.Bytes()
	}
	buf.Reset()
	text := *rec
	text.Request.Content = referenceAsText(rec.Request.Content)
	text.Response.Content = referenceAsText(rec.Response.Content)
	if err := enc.Encode(text); err != nil {
		t.Fatalf("reference encoding: %v", err)
	}
	return buf.Bytes()
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
	if want := referenceRecordLine(t, rec); !bytes.Equal(got[len("prefix"):], want) {
		t.Fatalf("record %#v\n got %q\nwant %q", rec, got[len("prefix"):], want)
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
}

// notJSONBodies are not JSON; some are UTF-8 (recorded as text), some
// not (base64).
var notJSONBodies = []string{
	"--boundary\r\nnot json", `{"a":1`, `{"a":1}}`, `{"a" 1}`, `[1,]`, `{,}`, `01`, `-`, `1.`, `1e`, `.5`,
	`tru`, `nul`, `"unterminated`, "\"ctrl\x01\"", `"\x"`, `"\u12G4"`, `{"a":1}x`, `[1 2]`, "\xff\xd8\xff\xe0 jpeg",
	"plain <text> & more \u2028", `{'a':1}`, `NaN`, `+1`, "\"\\u123\"",
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
	for range r.IntN(8) {
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
	got, ok := appendCompactJSON(nil, src)
	if valid := json.Valid(src); ok != valid {
		t.Fatalf("%q: appendCompactJSON says valid %v, json.Valid %v", src, ok, valid)
	}
	if !ok {
		return
	}
	want, err := json.Marshal(json.RawMessage(src))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%q:\n got %q\nwant %q", src, got, want)
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
