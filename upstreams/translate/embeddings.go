package translate

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
)

// EmbeddingsRequest is an embeddings.create request with text input.
type EmbeddingsRequest struct {
	Model          string
	Input          []string
	Dimensions     int
	EncodingFormat string
}

// DecodeEmbeddings reads a call's embeddings request; token-array input
// is refused (the translating providers embed text).
func DecodeEmbeddings(kind string, call *upstreams.Call) (*EmbeddingsRequest, error) {
	var raw struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		Dimensions     int             `json:"dimensions"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.Unmarshal(call.Body, &raw); err != nil {
		return nil, upstreams.InvalidRequest("", "The request body could not be read: %s.", schemas.DescribeJSONError(err))
	}
	req := &EmbeddingsRequest{Model: raw.Model, Dimensions: raw.Dimensions, EncodingFormat: raw.EncodingFormat}
	var one string
	if json.Unmarshal(raw.Input, &one) == nil {
		req.Input = []string{one}
	} else if json.Unmarshal(raw.Input, &req.Input) != nil {
		return nil, Unsupported(kind, "input", "input must be a string or an array of strings: token arrays cannot be embedded by this provider.")
	}
	return req, nil
}

// EmbeddingsReply is the embeddings.create reply.
type EmbeddingsReply struct {
	Object string      `json:"object"`
	Data   []Embedding `json:"data"`
	Model  string      `json:"model"`
	Usage  struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// Embedding is one vector: floats, or a base64 string of little-endian
// float32s when the request asked for encoding_format base64.
type Embedding struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

// NewEmbeddings builds the reply from the vectors in input order.
func NewEmbeddings(req *EmbeddingsRequest, vectors [][]float64, promptTokens int) *EmbeddingsReply {
	r := &EmbeddingsReply{Object: "list", Model: req.Model, Data: make([]Embedding, len(vectors))}
	for i, v := range vectors {
		r.Data[i] = Embedding{Object: "embedding", Index: i, Embedding: v}
		if req.EncodingFormat == "base64" {
			buf := make([]byte, 0, 4*len(v))
			for _, f := range v {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(f)))
			}
			r.Data[i].Embedding = base64.StdEncoding.EncodeToString(buf)
		}
	}
	r.Usage.PromptTokens, r.Usage.TotalTokens = promptTokens, promptTokens
	return r
}
