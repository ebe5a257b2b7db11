package record

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// testSecrets are the gateway's secret names, redacted by AppendHeader.
var testSecrets = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "Api-Key", "X-Api-Key"}

// longSecrets are testSecrets and names of 63 bytes and more, whose
// lengths AppendHeader tells apart up to 63.
var longSecrets = append([]string{
	strings.Repeat("S", 63), strings.Repeat("S", 64), strings.Repeat("S", 72), strings.Repeat("T", 80),
}, testSecrets...)

// checkAppendHeader holds AppendHeader of h to encoding/json's writing of
// h with its secrets' values redacted, and its report to whether every
// name and value written was UTF-8.
func checkAppendHeader(t testing.TB, h http.Header, secret []string) {
	t.Helper()
	redactedHeader := http.Header{}
	valid := true
	for name, values := range h {
		if len(values) > 0 && slices.Contains(secret, name) {
			values = redacted
		}
		redactedHeader[name] = values
		valid = valid && utf8.ValidString(name)
		for _, v := range values {
			valid = valid && utf8.ValidString(v)
		}
	}
	want, err := json.Marshal(redactedHeader)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := AppendHeader([]byte("x"), h, secret)
	if string(got) != "x"+string(want) || ok != valid {
		t.Fatalf("%q:\n got %q (valid %v)\nwant %q (valid %v)", h, got, ok, want, valid)
	}
}

// TestAppendHeaderMatchesEncodingJSON: a header's fields, with one value
// (the usual field, which AppendHeader writes without escaping when its
// name and value are plain) or with none or several, each byte value at
// each place of the name and of the value, and random headers of odd
// names and values beside secret ones (the gateway's, ones of 63 bytes
// and more) and names as long as a secret one, are written as
// encoding/json writes them, secrets redacted.
func TestAppendHeaderMatchesEncodingJSON(t *testing.T) {
	everyByteEverywhere(20, func(s string) {
		checkAppendHeader(t, http.Header{s: {"application/json"}, "Content-Type": {s}}, testSecrets)
		checkAppendHeader(t, http.Header{"A": {s, s}, s: nil, "X-Api-Key": {s}}, testSecrets)
	})
	r := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		h := http.Header{}
		for range r.IntN(20) {
			name := oddString(r)
			switch r.IntN(8) {
			case 0, 1:
				name = longSecrets[r.IntN(len(longSecrets))]
			case 2:
				// As long as a secret name, not one.
				name = longSecrets[r.IntN(len(longSecrets))] + "x"
				name = name[1:]
			}
			var values []string
			if r.IntN(8) > 0 {
				values = []string{}
				for range r.IntN(3) + 1 {
					values = append(values, oddString(r))
				}
			}
			h[name] = values
		}
		// With and without the secret of 63 bytes, whose bit longer
		// names share.
		checkAppendHeader(t, h, longSecrets[r.IntN(2):])
	}
}

// FuzzAppendHeader: go test -fuzz FuzzAppendHeader ./record
func FuzzAppendHeader(f *testing.F) {
	for _, s := range oddPieces {
		f.Add(s, "X-Ratelimit-Remaining-Tokens", s, uint8(1))
	}
	for _, s := range longSecrets {
		f.Add(s, "Bearer k", "Content-Type", uint8(2))
	}
	f.Fuzz(func(t *testing.T, name, value, other string, n uint8) {
		values := make([]string, n%4)
		for i := range values {
			values[i] = value
		}
		checkAppendHeader(t, http.Header{name: values, other: {value}, value: {name}}, longSecrets)
	})
}
