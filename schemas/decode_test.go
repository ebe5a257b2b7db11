package schemas

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceDecode is encoding/json as decodeObject used it alone.
func referenceDecode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// checkParse: what parseObject takes, encoding/json decodes to the same
// value, and the only value in the data.
func checkParse(t *testing.T, data []byte) bool {
	t.Helper()
	got, ok := parseObject(data)
	if !ok {
		return false
	}
	want, err := referenceDecode(data)
	if err != nil || !reflect.DeepEqual(any(got), want) {
		t.Fatalf("parseObject(%q) = %#v, encoding/json = %#v (%v)", data, got, want, err)
	}
	if _, v := decodeObject(data, false); v != nil {
		t.Fatalf("parseObject takes %q, decodeObject refuses it: %v", data, v)
	}
	return true
}

func TestParseObjectAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":-0.5e+10,"b":[1,2,{"c":null}],"d":true,"e":false,"f":"x"}`,
		`{"s":"tab\tnew\nquote\"slash\/back\\u\u00e9\u20ac bell\b\f\r"}`, `{"k":"é😀"}`,
		`{"n":[0,-0,1.0,1e2,1E-2,123456789012345678901234567890]}`, `{"a":[]}`, "{\n\t\"a\" : [ 1 , 2 ] \r\n}",
		string(chatBody(1 << 12)),
	} {
		if !checkParse(t, []byte(s)) {
			t.Errorf("parseObject does not take %s", s)
		}
	}
	// Arrays of every length around the eight items gathered on the stack.
	for n := range 20 {
		items := strings.Repeat(`"x",`, n) + `{"k":[1,2]}`
		if !checkParse(t, []byte(`{"a":[`+items+`],"b":[[`+items+`],[]]}`)) {
			t.Errorf("parseObject does not take an array of %d items", n+1)
		}
	}
	// Left to encoding/json: errors, and what it words or mends itself.
	for _, s := range []string{
		``, `[]`, `"x"`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":[1,]}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`,
		`{"a":-}`, `{"a":tru}`, `{"a":"\ud83d\ude00"}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", "{\"a\":\"\x01\"}",
		`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":1,"a":2}`, `{"b":[{"a":1,"a":{}}]}`, `{"a":1} {}`, `{"a":1}]`, `{a:1}`, strings.Repeat(`{"a":`, 300) + `1` + strings.Repeat(`}`, 300),
	} {
		if checkParse(t, []byte(s)) {
			t.Errorf("parseObject takes %q", s)
		}
	}
}

// TestParseObjectOnGeneratedDocuments: the generated requests and replies
// of fast_gen_test.go, whole and cut short at random.
func TestParseObjectOnGeneratedDocuments(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(5, 6))}
	for i := range 2000 {
		doc := g.request()
		g.mutate(doc)
		if i%2 == 0 {
			doc = g.reply()
		}
		data, _ := json.Marshal(doc)
		if !checkParse(t, data) {
			t.Fatalf("parseObject does not take %s", data)
		}
		checkParse(t, data[:g.pick(len(data))])
	}
}

// FuzzParseObject: whatever the data, parseObject takes only what
// encoding/json decodes the same way.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,"x\n\u00e9",true,null,{}]}`, `{"a":"\ud800"}`, string(chatBody(300)), `{"a":1}]`,
		`{"a long name with \"quotes\"":"line one\nline two\tand é \\ more text past a word\r\n"}`,
		"{\"k\":\"twelve bytes\\n\x01after\"}", "{\"k\":\"twelve bytes\\n\xffafter\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, data)
	})
}

// TestDeepRequestsAreRefused: a request nesting deeper than
// MaxRequestNesting is refused before its schema is validated (a search
// filter of compounds 49 deep has its scalars at level 100 and passes; 50
// deep is refused), and so is one of 2,000 compounds, whose validation
// took minutes.
func TestDeepRequestsAreRefused(t *testing.T) {
	filter := func(depth int) []byte {
		return []byte(`{"query":"x","filters":` + strings.Repeat(`{"type":"or","filters":[`, depth) + `{"type":"eq","key":"k","value":"v"}` + strings.Repeat(`]}`, depth) + `}`)
	}
	if _, v := ValidateRequest("vector_stores.search", filter(49)); v != nil {
		t.Fatalf("49 compounds: %s", v.Message)
	}
	for _, depth := range []int{50, 2000} {
		_, v := ValidateRequest("vector_stores.search", filter(depth))
		if v == nil || v.Param != "filters" || !strings.Contains(v.Message, "filters nests deeper than the 100 levels") {
			t.Fatalf("%d compounds: %+v", depth, v)
		}
	}
	// The same through encoding/json, where a \ud800 escape sends it.
	escaped := func(depth int) []byte { return append([]byte(`{"a":"\ud800",`), filter(depth)[1:]...) }
	if _, v := decodeObject(escaped(49), true); v != nil {
		t.Fatalf("49 compounds through encoding/json: %s", v.Message)
	}
	if _, v := decodeObject(escaped(50), true); v == nil || v.Param != "filters" || !strings.Contains(v.Message, "filters nests deeper than the 100 levels") {
		t.Fatalf("50 compounds through encoding/json: %+v", v)
	}
}

// TestRequestValuesAreBounded: a request body of MaxRequestValues values
// and member names decodes, one more is refused naming the top-level
// member it was in, on the fast parser's path and on encoding/json's (a
// \ud800 escape sends a document there). A body of 32 million numbers
// (64 MiB) is refused having allocated a small part of what decoding it
// took: 1.5 GiB for 62 MiB of small values before the bound.
func TestRequestValuesAreBounded(t *testing.T) {
	numbers := func(head string, k int) []byte {
		return []byte(head + `"input":[0` + strings.Repeat(`,0`, k-1) + `]}`)
	}
	// {, "input", [ and k numbers: k+3.
	if _, v := ValidateRequest("files.list", numbers(`{`, MaxRequestValues-3)); v != nil {
		t.Fatalf("%d values: %s", MaxRequestValues, v.Message)
	}
	_, v := ValidateRequest("files.list", numbers(`{`, MaxRequestValues-2))
	if v == nil || v.Param != "input" || !strings.Contains(v.Message, "more than the 1000000 values and member names") {
		t.Fatalf("%d values: %+v", MaxRequestValues+1, v)
	}
	// {, "a", "\ud800", "input", [ and k numbers: k+5.
	if _, v := decodeObject(numbers(`{"a":"\ud800",`, MaxRequestValues-5), true); v != nil {
		t.Fatalf("%d values through encoding/json: %s", MaxRequestValues, v.Message)
	}
	if _, v := decodeObject(numbers(`{"a":"\ud800",`, MaxRequestValues-4), true); v == nil || !strings.Contains(v.Message, "more than the 1000000") {
		t.Fatalf("%d values through encoding/json: %+v", MaxRequestValues+1, v)
	}
	huge := numbers(`{`, 32<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, v = ValidateRequest("embeddings.create", huge)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d MiB body of %d numbers: %d MiB allocated to refuse it", len(huge)>>20, 32<<20, allocated>>20)
	if v == nil || v.Param != "input" {
		t.Fatalf("32M numbers: %+v", v)
	}
	if allocated > 256<<20 {
		t.Fatalf("refusing 32M numbers allocated %d MiB", allocated>>20)
	}
}

// TestHasControlAgreesByteByByte: hasControl finds a byte below 0x20 where
// a byte loop does, in random strings of every length up to 40 with at
// most one such byte anywhere, among bytes on both sides of 0x20 and 0x80.
func TestHasControlAgreesByteByByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	near := []byte{0x00, 0x1f, 0x20, 0x21, 0x7f, 0x80, 0x9f, 0xa0, 0xff, 'a', '"'}
	for range 100000 {
		s := make([]byte, rng.IntN(41))
		for i := range s {
			if s[i] = near[rng.IntN(len(near))]; s[i] < 0x20 {
				s[i] = 0x20 + byte(rng.IntN(0xe0))
			}
		}
		if len(s) > 0 && rng.IntN(2) == 0 {
			s[rng.IntN(len(s))] = byte(rng.IntN(0x20))
		}
		want := bytes.ContainsFunc(s, func(r rune) bool { return r < 0x20 })
		if got := hasControl(s); got != want {
			t.Fatalf("hasControl(%q) = %v", s, got)
		}
	}
}

// TestValidTextAgreesWithUTF8Valid: validText takes a string's bytes
// exactly when they hold no byte below 0x20 and are valid UTF-8, in random
// strings of ASCII runs (of lengths across the eight-byte words) with at
// most a few control bytes, runes of two to four bytes, and broken ones.
func TestValidTextAgreesWithUTF8Valid(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	pieces := []string{"a", "quick brown", "0123456789abcdef", "\x7f", "é", "€", "😀", "\x80", "\xff", "\xe2\x82", "\xed\xa0\x80"}
	var valid, invalid int
	for range 100000 {
		var s []byte
		for range rng.IntN(8) {
			s = append(s, pieces[rng.IntN(len(pieces))]...)
		}
		if len(s) > 0 && rng.IntN(4) == 0 {
			s[rng.IntN(len(s))] = byte(rng.IntN(0x20))
		}
		want := !bytes.ContainsFunc(s, func(r rune) bool { return r < 0x20 }) && utf8.Valid(s)
		if got := validText(s); got != want {
			t.Fatalf("validText(%q) = %v", s, got)
		}
		if want {
			valid++
		} else {
			invalid++
		}
	}
	if valid < 10000 || invalid < 10000 {
		t.Fatalf("generator too weak: %d valid, %d not", valid, invalid)
	}
}

// TestKnownStringsAreFound: each known string is found, as itself and in
// its own box, and strings that share a slot's bytes with one (its length,
// first, middle and last bytes) but are none of them are not.
func TestKnownStringsAreFound(t *testing.T) {
	known := map[string]bool{}
	for _, s := range knownStrings {
		known[s] = true
	}
	for _, s := range knownStrings {
		k := lookupKnown([]byte(s))
		if k.s != s || k.box != any(s) {
			t.Fatalf("lookupKnown(%q) = %q, %#v", s, k.s, k.box)
		}
		inner := []byte(s)
		inner[len(s)/3] ^= 1 // mostly a byte the slot does not read
		for _, near := range []string{s[:len(s)-1], s + "x", "x" + s[1:], s[:len(s)-1] + "x", strings.ToUpper(s), string(inner)} {
			if k := lookupKnown([]byte(near)); !known[near] && k.s != "" {
				t.Errorf("lookupKnown(%q) = %q", near, k.s)
			}
		}
	}
	if k := lookupKnown(nil); k.s != "" {
		t.Errorf("lookupKnown(nil) = %q", k.s)
	}
}

// TestArrayAllocatedOnce: an array is allocated once, at its length, so a
// request's messages cost the allocations of one item's array whatever
// their number (up to eight gathered on the stack; bools and null box
// without allocating).
func TestArrayAllocatedOnce(t *testing.T) {
	allocs := func(doc string) float64 {
		return testing.AllocsPerRun(100, func() {
			if _, ok := parseObject([]byte(doc)); !ok {
				t.Fatalf("parseObject does not take %s", doc)
			}
		})
	}
	one, eight := allocs(`{"a":[true]}`), allocs(`{"a":[true,false,null,true,false,null,true,false]}`)
	if eight != one {
		t.Errorf("an array of eight items costs %v allocations, of one %v", eight, one)
	}
}

// TestStringBytesAgreeWithEncodingJSON: a string with a quote, a
// backslash's escape, a control byte, a byte from 0x80 up (valid UTF-8 or
// not) or DEL at each offset of its first words and past them, its end
// anywhere from the first byte to the data's end, is read as encoding/json
// reads it, and taken whenever encoding/json takes it unmended (valid
// UTF-8, no \u escape).
func TestStringBytesAgreeWithEncodingJSON(t *testing.T) {
	for _, special := range []string{`\"`, `\\`, `\n`, `\/`, "\x01", "\x1f", "\x7f", "é", "😀", "\x80", "\xc3", "\xff", " ", "~"} {
		for before := range 26 {
			for _, after := range []int{0, 1, 5, 7, 8, 9, 20} {
				s := strings.Repeat("a", before) + special + strings.Repeat("b", after)
				for _, doc := range []string{`{"` + s + `":1}`, `{"k":"` + s + `"}`, `{"k":["` + s + `"]}`} {
					data := []byte(doc)
					taken := checkParse(t, data)
					if want := json.Valid(data) && utf8.Valid(data); taken != want {
						t.Errorf("parseObject takes %q: %v, want %v", doc, taken, want)
					}
				}
			}
		}
	}
}

// TestEscapedStringsAgreeWithEncodingJSON: long strings with escapes at
// random places (an escaped quote first or not, \u escapes, multi-byte
// text), as names and values, read as encoding/json reads them, and all
// taken.
func TestEscapedStringsAgreeWithEncodingJSON(t *testing.T) {
	pieces := []string{"a", "word ", `\n`, `\"`, `\\`, `\t`, `\u00e9`, `\u20ac`, `\/`, "é", "😀", `\u0000`}
	r := rand.New(rand.NewPCG(7, 8))
	for range 3000 {
		var b strings.Builder
		for range r.IntN(120) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		for _, doc := range []string{`{"` + s + `":1}`, `{"k":"` + s + `"}`, `{"k":["x","` + s + `"]}`} {
			if !checkParse(t, []byte(doc)) {
				t.Fatalf("parseObject does not take %s", doc)
			}
		}
	}
}

// TestEscapedStringAllocatedOnce: a long string with escapes costs the
// allocations of one without: its buffer is sized for it at once and
// becomes the string itself, not copied again.
func TestEscapedStringAllocatedOnce(t *testing.T) {
	allocs := func(doc string) float64 {
		return testing.AllocsPerRun(100, func() {
			if _, ok := parseObject([]byte(doc)); !ok {
				t.Fatalf("parseObject does not take %s", doc)
			}
		})
	}
	line := strings.Repeat("A line of a long prompt. ", 8)
	plain := allocs(`{"k":"` + strings.Repeat(line+" ", 10) + `"}`)
	for _, s := range []string{strings.Repeat(line+`\n`, 10), `\n` + strings.Repeat(line+" ", 10)} {
		if escaped := allocs(`{"k":"` + s + `"}`); escaped != plain {
			t.Errorf("a string with escapes costs %v allocations, one without %v: %.40s", escaped, plain, s)
		}
	}
}

// TestPlainEndAgreesByteByByte: plainEnd stops at the first quote,
// backslash or control byte, from every offset of texts of those bytes,
// their neighbours and bytes from 0x80 up, of every length around its
// eight bytes.
func TestPlainEndAgreesByteByByte(t *testing.T) {
	alphabet := []byte{'"', '\\', 0x00, 0x1f, 0x20, '!', '#', '[', ']', 0x7f, 0x80, 0xa2, 0xdc, 0xff}
	r := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		b := make([]byte, r.IntN(24))
		for k := range b {
			b[k] = 'a' + byte(r.IntN(26))
			if r.IntN(6) == 0 {
				b[k] = alphabet[r.IntN(len(alphabet))]
			}
		}
		for i := range len(b) + 1 {
			want := i
			for want < len(b) && b[want] != '"' && b[want] != '\\' && b[want] >= 0x20 {
				want++
			}
			if got := plainEnd(b, i); got != want {
				t.Fatalf("plainEnd(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	}
}
