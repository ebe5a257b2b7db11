package modelgate

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tidwall/sjson"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
)

// TestUsageOptionAgreesWithSjson: the body a stream is sent upstream with
// when the gateway asks for its usage is sjson.SetBytes's, byte for byte
// (it is also the body the record keeps), for valid chat requests with
// and without stream_options, spaced in every way JSON allows, and it
// decodes with include_usage true. Bodies without stream_options must
// make up most of them, since they take the path that appends it.
func TestUsageOptionAgreesWithSjson(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 29))
	space := func() string {
		return strings.Repeat([]string{"", " ", "\n", "\t", "\r\n  "}[rng.IntN(5)], rng.IntN(3))
	}
	members := []string{
		`"model":"gpt-4o-mini"`,
		`"messages":[{"role":"user","content":"} \"stream_options\": {"}]`,
		`"stream":true`,
		`"max_tokens":256`,
		`"user":"stream_options"`,
		`"metadata":{"stream_options":"x"}`,
	}
	options := []string{
		`"stream_options":{}`,
		`"stream_options":{"include_usage":false}`,
		`"stream_options":null`,
		`"stream\u005foptions":{"include_usage":false}`,
		`"stream_options":{ "include_obfuscation" : false }`,
	}
	appended := 0
	for range 3000 {
		picked := []string{members[0], members[1], members[2]}
		for _, m := range members[3:] {
			if rng.IntN(2) == 0 {
				picked = append(picked, m)
			}
		}
		if rng.IntN(4) == 0 {
			picked = append(picked, options[rng.IntN(len(options))])
		}
		rng.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
		var b strings.Builder
		b.WriteString(space() + "{" + space())
		for i, m := range picked {
			if i > 0 {
				b.WriteString(space() + "," + space())
			}
			name, value, _ := strings.Cut(m, ":")
			b.WriteString(name + space() + ":" + space() + value)
		}
		b.WriteString(space() + "}" + space())
		body := []byte(b.String())
		doc, v := schemas.ValidateRequest(upstreams.OpChatCompletionsCreate, body)
		if v != nil {
			continue // e.g. stream_options null; the gateway refuses it before
		}
		want, wantErr := sjson.SetBytes(bytes.Clone(body), "stream_options.include_usage", true)
		got, err := withUsageOption(body, doc)
		if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %q (%v)\nwant %q (%v)", body, got, err, want, wantErr)
		}
		asked, v := schemas.ValidateRequest(upstreams.OpChatCompletionsCreate, got)
		if v != nil || !clientWantsUsage(asked) {
			t.Fatalf("%q: the body sent %q does not ask for usage (%v)", body, got, v)
		}
		if _, ok := doc["stream_options"]; !ok {
			appended++
		}
	}
	if appended < 1500 {
		t.Fatalf("generator too weak: %d bodies without stream_options", appended)
	}
	// The smallest objects, which take no comma.
	for _, body := range []string{`{}`, ` { } `, "{\n}\n"} {
		want, _ := sjson.SetBytes([]byte(body), "stream_options.include_usage", true)
		if got, _ := withUsageOption([]byte(body), map[string]any{}); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q, sjson writes %q", body, got, want)
		}
	}
}
