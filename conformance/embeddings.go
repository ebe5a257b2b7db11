package conformance

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"net/http"
	"strings"
)

// Embeddings (public API, `POST /embeddings`).

const (
	specEmbeddings       = "Create embeddings: `input` is a string, an array of strings, an array of tokens or an array of token arrays; the reply is a list of `embedding` objects, one per input by `index`, with `usage` prompt_tokens and total_tokens."
	specEmbeddingsFormat = "`encoding_format`: the format to return the embeddings in, `float` or `base64` (the float32 values, little-endian)."
	specEmbeddingsDims   = "`dimensions`: the number of dimensions the resulting output embeddings should have (text-embedding-3 and later models)."
	specEmbeddingsLimits = "The input must not exceed the max input tokens for the model (8192 tokens), cannot be an empty string, and any array must be 2048 dimensions or less."
	embeddingModel       = "text-embedding-3-small"
	embeddingsPath       = "/v1/embeddings"
)

type embeddingList struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// embed sends an embeddings request that must succeed.
func (t *T) embed(fields ...any) (*exchange, *embeddingList) {
	body := map[string]any{"model": embeddingModel}
	for i := 0; i+1 < len(fields); i += 2 {
		body[fields[i].(string)] = fields[i+1]
	}
	ex := t.do(request{op: "embeddings.create", method: http.MethodPost, path: embeddingsPath, json: body})
	t.requireStatus(ex, http.StatusOK)
	var l embeddingList
	t.decode(ex, &l)
	return ex, &l
}

func floats(v any) []float64 {
	list, _ := v.([]any)
	out := make([]float64, 0, len(list))
	for _, x := range list {
		f, _ := x.(float64)
		out = append(out, f)
	}
	return out
}

var embeddingChecks = []Check{
	{ID: "embeddings.create", Area: AreaEmbeddings, Spec: specEmbeddings,
		run: func(t *T) {
			ex, one := t.embed("input", "The quick brown fox")
			t.expect(one.Object == "list" && len(one.Data) == 1 && len(floats(one.Data[0].Embedding)) > 0 && one.Usage.PromptTokens > 0 && one.Usage.TotalTokens >= one.Usage.PromptTokens,
				ex, "one embedding and usage", "%d items, usage %s", len(one.Data), jsonText(one.Usage))
			for _, input := range []any{[]any{"a", "b", "c"}, []any{[]any{1, 2}, []any{3}, []any{4, 5, 6}}} {
				ex, many := t.embed("input", input)
				ok := len(many.Data) == 3
				for i := 0; ok && i < 3; i++ {
					ok = many.Data[i].Index == i && many.Data[i].Object == "embedding"
				}
				t.expect(ok, ex, "three embeddings at indexes 0, 1, 2", "%s", jsonText(many.Data))
			}
			ex, tokens := t.embed("input", []any{1, 2, 3})
			t.expect(len(tokens.Data) == 1, ex, "one embedding for a token array", "%d", len(tokens.Data))
		}},
	{ID: "embeddings.base64", Area: AreaEmbeddings, Spec: specEmbeddingsFormat,
		run: func(t *T) {
			_, f := t.embed("input", "same text", "encoding_format", "float")
			ex, b := t.embed("input", "same text", "encoding_format", "base64")
			s, _ := b.Data[0].Embedding.(string)
			raw, err := base64.StdEncoding.DecodeString(s)
			want := floats(f.Data[0].Embedding)
			if !t.expect(err == nil && len(raw) == 4*len(want), ex, "base64 of as many float32 values as the float reply has", "%d bytes for %d values", len(raw), len(want)) {
				return
			}
			for i, x := range want {
				got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
				if !t.expect(math.Abs(float64(got)-x) < 1e-6, ex, "the same vector in both encodings", "component %d: %v vs %v", i, got, x) {
					return
				}
			}
		}},
	{ID: "embeddings.dimensions", Area: AreaEmbeddings, Spec: specEmbeddingsDims,
		run: func(t *T) {
			ex, l := t.embed("input", "shorter", "dimensions", 8)
			t.expect(len(floats(l.Data[0].Embedding)) == 8, ex, "8 dimensions", "%d", len(floats(l.Data[0].Embedding)))
			t.expectParam(t.do(request{method: http.MethodPost, path: embeddingsPath, json: map[string]any{"model": embeddingModel, "input": "x", "dimensions": 0}}), "dimensions")
		}},
	{ID: "embeddings.limits", Area: AreaEmbeddings, Spec: specEmbeddingsLimits,
		run: func(t *T) {
			inputs := func(n int) []any {
				out := make([]any, n)
				for i := range out {
					out[i] = "x"
				}
				return out
			}
			t.embed("input", inputs(2048))
			refuse := func(input any) {
				t.expectParam(t.do(request{method: http.MethodPost, path: embeddingsPath, json: map[string]any{"model": embeddingModel, "input": input}}), "input")
			}
			refuse(inputs(2049))
			refuse("")
			refuse(strings.Repeat("hello ", 8193))
		}},
}
