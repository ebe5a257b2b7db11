package gemini

import (
	"net/http"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// MaxEmbedBatch is the most inputs Gemini embeds in one
// batchEmbedContents call; larger requests are sent in calls of at most
// this many.
const MaxEmbedBatch = 100

type batchEmbedRequest struct {
	Requests []embedRequest `json:"requests"`
}

type embedRequest struct {
	Model                string  `json:"model"`
	Content              content `json:"content"`
	OutputDimensionality int     `json:"outputDimensionality,omitempty"`
}

// embed translates embeddings.create to batchEmbedContents, one request
// per input, in calls of at most MaxEmbedBatch inputs whose vectors are
// joined in input order. Gemini reports no token count for embeddings:
// usage is 0. A failed call fails the whole request.
func (p *Provider) embed(c *upstreams.Call) (*http.Response, error) {
	in, err := translate.DecodeEmbeddings("gemini", c)
	if err != nil {
		return nil, err
	}
	model := "models/" + p.ProviderModel(c.Model)
	vectors := make([][]float64, 0, len(in.Input))
	for start := 0; start < len(in.Input); start += MaxEmbedBatch {
		batch := in.Input[start:min(start+MaxEmbedBatch, len(in.Input))]
		out := batchEmbedRequest{Requests: make([]embedRequest, len(batch))}
		for i, text := range batch {
			out.Requests[i] = embedRequest{Model: model, Content: content{Parts: []part{{Text: text}}}, OutputDimensionality: in.Dimensions}
		}
		resp, err := p.post(c, ":batchEmbedContents", nil, out)
		if err != nil || resp.StatusCode >= 300 {
			return resp, err
		}
		if vectors, err = appendVectors(vectors, resp, len(batch)); err != nil {
			return nil, err
		}
	}
	return translate.JSONResponse(http.StatusOK, translate.NewEmbeddings(in, vectors, 0)), nil
}

// appendVectors reads one batchEmbedContents reply of n vectors.
func appendVectors(vectors [][]float64, resp *http.Response, n int) ([][]float64, error) {
	var reply struct {
		Embeddings []struct {
			Values []float64 `json:"values"`
		} `json:"embeddings"`
	}
	if err := translate.DecodeReply("gemini", resp.Body, &reply); err != nil {
		return nil, err
	}
	if len(reply.Embeddings) != n {
		return nil, translate.BadReply("gemini")
	}
	for _, e := range reply.Embeddings {
		vectors = append(vectors, e.Values)
	}
	return vectors, nil
}
