package reference

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// The public limits of the embeddings operation: inputs per request,
// tokens per input and tokens summed over a request's inputs.
const (
	MaxEmbeddingInputs       = 2048
	MaxEmbeddingInputTokens  = 8192
	MaxEmbeddingRequestTotal = 300_000
)

// defaultEmbeddingDims is the vector length of models the engine does not
// know by name; maxEmbeddingDims bounds `dimensions` for them.
const (
	defaultEmbeddingDims = 256
	maxEmbeddingDims     = 3072
)

// nativeDims are the vector lengths of the public embedding models.
var nativeDims = map[string]int{
	"text-embedding-ada-002": 1536,
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
}

// embeddingInput is one input: its text (decoded from tokens when it was
// sent as tokens) and its token count.
type embeddingInput struct {
	text   string
	tokens int
}

// serveEmbeddings answers an embeddings request with feature-hashed
// vectors: deterministic, and closer for texts that share words.
func serveEmbeddings(w http.ResponseWriter, doc map[string]any) error {
	d := docReader{}
	model, format := d.str(doc, "model"), d.str(doc, "encoding_format")
	asked := d.optInt(doc, "dimensions")
	if d.err != nil {
		return d.err
	}
	dims, err := embeddingDims(model, asked)
	if err != nil {
		return err
	}
	enc := tokens.ForModel(model)
	inputs, err := embeddingInputs(doc["input"], enc)
	if err != nil {
		return err
	}
	total := 0
	for _, in := range inputs {
		total += in.tokens
	}
	if total > MaxEmbeddingRequestTotal {
		return upstreams.InvalidRequest("input", "Requested %d tokens, max %d tokens per request", total, MaxEmbeddingRequestTotal)
	}
	data := make([]map[string]any, len(inputs))
	for i, in := range inputs {
		v := Embed(in.text, dims)
		var out any = v
		if format == "base64" {
			out = base64Floats(v)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": out}
	}
	upstreams.WriteJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   data,
		"model":  model,
		"usage":  map[string]int{"prompt_tokens": total, "total_tokens": total},
	})
	return nil
}

// embeddingDims is the vector length for a model and `dimensions`.
func embeddingDims(model string, asked *int) (int, *upstreams.Error) {
	native, known := nativeDims[model]
	if asked == nil {
		if known {
			return native, nil
		}
		return defaultEmbeddingDims, nil
	}
	limit := maxEmbeddingDims
	if known {
		limit = native
	}
	switch {
	case model == "text-embedding-ada-002":
		return 0, upstreams.InvalidRequest("dimensions", "This model does not support specifying dimensions.")
	case *asked < 1 || *asked > limit:
		return 0, upstreams.InvalidRequest("dimensions", "dimensions must be between 1 and %d for the model %s, got %d", limit, model, *asked)
	}
	return *asked, nil
}

// embeddingInputs reads `input` in its four public forms.
func embeddingInputs(input any, enc *tokens.Encoding) ([]embeddingInput, *upstreams.Error) {
	if one, ok := input.(string); ok {
		in, err := textInput(one, "input", enc)
		if err != nil {
			return nil, err
		}
		return []embeddingInput{in}, nil
	}
	list, _ := input.([]any)
	if len(list) == 0 {
		return nil, upstreams.InvalidRequest("input", "input must be a string, an array of strings, an array of tokens or an array of token arrays, with at least one item")
	}
	if ids, ok := tokenIDs(list); ok {
		in, err := tokenInput(ids, "input", enc)
		if err != nil {
			return nil, err
		}
		return []embeddingInput{in}, nil
	}
	if len(list) > MaxEmbeddingInputs {
		return nil, upstreams.InvalidRequest("input", "input must have at most %d items, got %d", MaxEmbeddingInputs, len(list))
	}
	out := make([]embeddingInput, len(list))
	for i, item := range list {
		param := "input[" + strconv.Itoa(i) + "]"
		var in embeddingInput
		var err *upstreams.Error
		items, _ := item.([]any)
		if one, ok := item.(string); ok {
			in, err = textInput(one, param, enc)
		} else if ids, ok := tokenIDs(items); ok && len(ids) > 0 {
			in, err = tokenInput(ids, param, enc)
		} else {
			err = upstreams.InvalidRequest(param, "%s must be a non-empty string or a non-empty array of tokens", param)
		}
		if err != nil {
			return nil, err
		}
		out[i] = in
	}
	return out, nil
}

// tokenIDs reads a decoded array of integers as token ids.
func tokenIDs(list []any) ([]int, bool) {
	ids := make([]int, len(list))
	for i, v := range list {
		var f float64
		switch n := v.(type) {
		case json.Number:
			var err error
			if f, err = n.Float64(); err != nil {
				return nil, false
			}
		case float64:
			f = n
		default:
			return nil, false
		}
		if f != float64(int32(f)) {
			return nil, false // not a token id (ids are far below 2^31)
		}
		ids[i] = int(f)
	}
	return ids, true
}

func textInput(s, param string, enc *tokens.Encoding) (embeddingInput, *upstreams.Error) {
	if s == "" {
		return embeddingInput{}, upstreams.InvalidRequest(param, "%s cannot be an empty string", param)
	}
	n := enc.Count(s)
	if n > MaxEmbeddingInputTokens {
		return embeddingInput{}, inputTooLong(param, n)
	}
	return embeddingInput{text: s, tokens: n}, nil
}

func tokenInput(ids []int, param string, enc *tokens.Encoding) (embeddingInput, *upstreams.Error) {
	if len(ids) > MaxEmbeddingInputTokens {
		return embeddingInput{}, inputTooLong(param, len(ids))
	}
	for _, id := range ids {
		if id < 0 || enc.Decode([]int{id}) == "" {
			return embeddingInput{}, upstreams.InvalidRequest(param, "%s holds the token %d, which the model's encoding %s does not have", param, id, enc.Name())
		}
	}
	return embeddingInput{text: enc.Decode(ids), tokens: len(ids)}, nil
}

func inputTooLong(param string, n int) *upstreams.Error {
	return upstreams.InvalidRequest(param, "This model's maximum context length is %d tokens, however you requested %d tokens in %s. Please reduce your prompt.", MaxEmbeddingInputTokens, n, param)
}

// Embed is the engine's vector for text: the text's lower-cased words and
// word pairs hashed (64-bit FNV-1a, fixed on every platform) into dims
// signed buckets, then scaled to unit length. Texts that share words share
// buckets, so their cosine similarity is higher than that of texts sharing
// none. A text without words is hashed by its characters.
func Embed(text string, dims int) []float32 {
	v := make([]float32, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		words = strings.Split(text, "")
	}
	for i, w := range words {
		addFeature(v, w, 1)
		if i > 0 {
			addFeature(v, words[i-1]+" "+w, 0.5)
		}
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum > 0 {
		inv := float32(1 / math.Sqrt(sum))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}

func addFeature(v []float32, feature string, weight float32) {
	h := fnv.New64a()
	h.Write([]byte(feature))
	sum := h.Sum64()
	if sum>>63 == 1 {
		weight = -weight
	}
	v[(sum&(1<<63-1))%uint64(len(v))] += weight
}

// base64Floats is the public base64 encoding of a vector: its float32
// values, little-endian, base64-encoded.
func base64Floats(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}
