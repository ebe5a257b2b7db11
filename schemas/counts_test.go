package schemas

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// A top-level array or object over every bound its schema allows is
// refused before its items are walked, with the violation validation
// gives (the same param and message as the full validation of a slightly
// larger body), at the boundary: 2,048 embeddings inputs pass, 2,049 do
// not; and refusing 90,000 arrays allocates a few megabytes (walked, they
// took 10 s).
func TestCountsAreCheckedBeforeItems(t *testing.T) {
	inputs := func(item string, n int) string {
		return `{"model":"text-embedding-3-small","input":[` + strings.Repeat(item+",", n-1) + item + `]}`
	}
	for _, item := range []string{`"a few words"`, `[1,2,3]`, `7`} {
		if _, v := ValidateRequest("embeddings.create", []byte(inputs(item, 2048))); v != nil {
			t.Fatalf("2,048 inputs %s: %+v", item, v)
		}
		want := Violation{Param: "input", Message: "input must have at most 2048 items"}
		if _, v := ValidateRequest("embeddings.create", []byte(inputs(item, 2049))); v == nil || *v != want {
			t.Fatalf("2,049 inputs %s: %+v", item, v)
		}
		s := schema(filesOf("embeddings.create").request)
		doc, _ := decodeObject([]byte(inputs(item, 2049)), true)
		if full := violation(s.Validate(doc), doc); *full != want {
			t.Fatalf("2,049 inputs %s validated whole: %+v", item, full)
		}
		var before, after runtime.MemStats
		body := []byte(inputs(item, 90_000))
		runtime.ReadMemStats(&before)
		_, v := ValidateRequest("embeddings.create", body)
		runtime.ReadMemStats(&after)
		if v == nil || *v != want {
			t.Fatalf("90,000 inputs %s: %+v", item, v)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Fatalf("refusing 90,000 inputs %s allocated %d MiB", item, grew>>20)
		}
	}
	// metadata holds at most 16 pairs.
	meta := func(n int) string {
		var pairs []string
		for i := range n {
			pairs = append(pairs, `"k`+strings.Repeat("x", i)+`":"v"`)
		}
		return `{"name":"s","metadata":{` + strings.Join(pairs, ",") + `}}`
	}
	if _, v := ValidateRequest("vector_stores.create", []byte(meta(16))); v != nil {
		t.Fatalf("16 pairs: %+v", v)
	}
	want := Violation{Param: "metadata", Message: "metadata must have at most 16 pairs"}
	if _, v := ValidateRequest("vector_stores.create", []byte(meta(17))); v == nil || *v != want {
		t.Fatalf("17 pairs: %+v", v)
	}
}

// TestCountsAreCheckedWhileDecoding: the gateway's parser refuses a
// top-level array or object as it passes its schema's bound, with the
// violation validation gives, having built no more than that: 3,000,000
// numbers where 2,048 inputs are allowed allocate well under a megabyte
// (decoded, the million values a request may hold took tens), and
// metadata's 16 pairs pass where 17 do not.
func TestCountsAreCheckedWhileDecoding(t *testing.T) {
	body := []byte(`{"model":"text-embedding-3-small","input":[0` + strings.Repeat(`,0`, 3_000_000) + `]}`)
	ValidateRequest("embeddings.create", []byte(`{"model":"m","input":"x"}`)) // the schemas compiled, the bounds computed
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, v := ValidateRequest("embeddings.create", body)
	runtime.ReadMemStats(&after)
	if want := (Violation{Param: "input", Message: "input must have at most 2048 items"}); v == nil || *v != want {
		t.Fatalf("3,000,000 numbers: %+v", v)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("refusing 3,000,000 numbers allocated %d bytes", grew)
	}
	pairs := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":"v"`, i)
		}
		return `{"model":"gpt-4o","input":"x","metadata":{` + b.String() + `}}`
	}
	if _, v := ValidateRequest("responses.create", []byte(pairs(16))); v != nil {
		t.Fatalf("16 metadata pairs: %+v", v)
	}
	want := Violation{Param: "metadata", Message: "metadata must have at most 16 pairs"}
	if _, v := ValidateRequest("responses.create", []byte(pairs(17))); v == nil || *v != want {
		t.Fatalf("17 metadata pairs: %+v", v)
	}
	if _, _, v := parseRequestOrObject([]byte(pairs(17)), true, nil); v != nil {
		t.Fatalf("without bounds the parser refused: %+v", v)
	}
}
