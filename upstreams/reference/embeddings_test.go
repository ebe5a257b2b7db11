package reference_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/reference"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// embeddings answers a raw embeddings request body with the engine.
func embeddings(t *testing.T, body string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	err := reference.Engine{}.ServeCall(rec, &upstreams.Call{Operation: upstreams.OpEmbeddingsCreate, Body: []byte(body)})
	var apiErr *upstreams.Error
	if errors.As(err, &apiErr) {
		upstreams.WriteError(rec, apiErr)
	} else if err != nil {
		t.Fatalf("ServeCall: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("reply %q: %v", rec.Body.String(), err)
	}
	return rec.Code, out
}

func cosine(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// TestEmbeddingsWithSDK: openai-go reads both encodings, and they carry
// the same vector.
func TestEmbeddingsWithSDK(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := (reference.Engine{}).ServeCall(w, &upstreams.Call{Operation: upstreams.OpEmbeddingsCreate, Body: body, Request: r}); err != nil {
			t.Errorf("ServeCall: %v", err)
		}
	}))
	defer srv.Close()
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	ctx := context.Background()
	p := openai.EmbeddingNewParams{Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"the cat sleeps", "a car drives"}}}
	floats, err := client.Embeddings.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	p.EncodingFormat = openai.EmbeddingNewParamsEncodingFormatBase64
	b64, err := client.Embeddings.New(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(floats.Data) != 2 || len(floats.Data[0].Embedding) != 1536 || floats.Usage.PromptTokens != 6 || floats.Usage.TotalTokens != 6 {
		t.Fatalf("float reply: %d items, usage %+v", len(floats.Data), floats.Usage)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(b64.RawJSON()), &raw); err != nil {
		t.Fatal(err)
	}
	first := raw["data"].([]any)[0].(map[string]any)["embedding"]
	s, ok := first.(string)
	if !ok {
		t.Fatalf("base64 reply carries %T", first)
	}
	for i, x := range floats.Data[0].Embedding {
		bits := binary.LittleEndian.Uint32(mustBase64(t, s)[4*i:])
		if float32(x) != math.Float32frombits(bits) {
			t.Fatalf("component %d: float %v, base64 %v", i, x, math.Float32frombits(bits))
		}
	}
}

func mustBase64(t *testing.T, s string) []byte {
	t.Helper()
	var b []byte
	if err := json.Unmarshal([]byte(`"`+s+`"`), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEmbeddingsDeterministicAndSimilar: the same text gives the same
// vector (its digest is fixed, so on every machine), unit length; texts
// sharing words are closer than texts sharing none; a text and its tokens
// embed alike.
func TestEmbeddingsDeterministicAndSimilar(t *testing.T) {
	v := reference.Embed("The quick brown fox jumps over the lazy dog", 256)
	h := sha256.New()
	for _, x := range v {
		_ = binary.Write(h, binary.LittleEndian, math.Float32bits(x))
	}
	// The digest of the engine's vector: it changes only with Version.
	if got := fmt.Sprintf("%x", h.Sum(nil)[:8]); got != goldenEmbedding {
		t.Fatalf("vector digest %s, want %s", got, goldenEmbedding)
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-5 {
		t.Fatalf("norm² %v", norm)
	}
	enc := tokens.ForModel("reference")
	text := "The cat sleeps on the warm windowsill"
	ids, _ := json.Marshal(enc.Encode(text))
	_, out := embeddings(t, `{"model":"reference","input":["The cat sleeps on the warm windowsill","A cat on a windowsill","Engines need oil and fuel"]}`)
	_, tok := embeddings(t, `{"model":"reference","input":`+string(ids)+`}`)
	vec := func(o map[string]any, i int) []float64 {
		var f []float64
		for _, x := range o["data"].([]any)[i].(map[string]any)["embedding"].([]any) {
			f = append(f, x.(float64))
		}
		return f
	}
	a, b, c := vec(out, 0), vec(out, 1), vec(out, 2)
	if near, far := cosine(a, b), cosine(a, c); near <= far || near < 0.3 {
		t.Fatalf("shared words %v, none %v", near, far)
	}
	if got := cosine(a, vec(tok, 0)); math.Abs(got-1) > 1e-6 {
		t.Fatalf("text and its tokens: cosine %v", got)
	}
	if tok["usage"].(map[string]any)["prompt_tokens"] != float64(enc.Count(text)) {
		t.Fatalf("usage %v", tok["usage"])
	}
}

const goldenEmbedding = "30f99c90e4966401"

// TestEmbeddingsLimits: each public limit at its boundary, refused with
// the param naming the field.
func TestEmbeddingsLimits(t *testing.T) {
	enc := tokens.ForModel("reference")
	the := enc.Encode(" the")[0]
	tokenArray := func(n int) string {
		return strings.TrimSuffix(strings.Repeat(fmt.Sprintf("%d,", the), n), ",")
	}
	arrays := func(sizes ...int) string {
		var b bytes.Buffer
		for i, n := range sizes {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("[" + tokenArray(n) + "]")
		}
		return b.String()
	}
	many := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = 8192
		}
		return out
	}
	strs := func(n int) string { return strings.TrimSuffix(strings.Repeat(`"x",`, n), ",") }
	cases := []struct {
		name, body, param string
	}{
		{"2048 inputs", `{"model":"reference","input":[` + strs(2048) + `]}`, ""},
		{"2049 inputs", `{"model":"reference","input":[` + strs(2049) + `]}`, "input"},
		{"8192 tokens", `{"model":"reference","input":[` + tokenArray(8192) + `]}`, ""},
		{"8193 tokens", `{"model":"reference","input":[` + tokenArray(8193) + `]}`, "input"},
		{"8193 tokens in the second", `{"model":"reference","input":[` + arrays(1, 8193) + `]}`, "input[1]"},
		{"8193 tokens of text", `{"model":"reference","input":["x",` + fmt.Sprintf("%q", strings.Repeat(" the", 8193)) + `]}`, "input[1]"},
		{"300000 tokens in all", `{"model":"reference","input":[` + arrays(append(many(36), 300000-36*8192)...) + `]}`, ""},
		{"300001 tokens in all", `{"model":"reference","input":[` + arrays(append(many(36), 300001-36*8192)...) + `]}`, "input"},
		{"empty string", `{"model":"reference","input":""}`, "input"},
		{"empty string in a list", `{"model":"reference","input":["a",""]}`, "input[1]"},
		{"unknown token", `{"model":"reference","input":[99999999]}`, "input"},
		{"1536 dimensions", `{"model":"text-embedding-3-small","input":"a","dimensions":1536}`, ""},
		{"1537 dimensions", `{"model":"text-embedding-3-small","input":"a","dimensions":1537}`, "dimensions"},
		{"3072 dimensions, unknown model", `{"model":"reference","input":"a","dimensions":3072}`, ""},
		{"3073 dimensions, unknown model", `{"model":"reference","input":"a","dimensions":3073}`, "dimensions"},
		{"dimensions on ada-002", `{"model":"text-embedding-ada-002","input":"a","dimensions":8}`, "dimensions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, out := embeddings(t, c.body)
			if c.param == "" {
				if status != 200 {
					t.Fatalf("status %d: %v", status, out)
				}
				return
			}
			e, _ := out["error"].(map[string]any)
			if status != 400 || e["param"] != c.param || e["type"] != "invalid_request_error" {
				t.Fatalf("status %d, error %v; want param %s", status, e, c.param)
			}
		})
	}
	_, out := embeddings(t, `{"model":"reference","input":"a","dimensions":3}`)
	if got := len(out["data"].([]any)[0].(map[string]any)["embedding"].([]any)); got != 3 {
		t.Fatalf("dimensions 3 gave %d", got)
	}
}
