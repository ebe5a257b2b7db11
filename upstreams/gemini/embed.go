package gemini

import (
	"net/http"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

type batchEmbedRequest struct {
	Requests []embedRequest `json:"requests"`
}

type embedRequest struct {
	Model                string  `json:"model"`
	Content              content `json:"content"`
	OutputDimensionality int     `json:"outputDimensionality,omitempty"`
}

// embed translates embeddings.create to batchEmbedContents, one request
// per input. Gemini reports no token count for embeddings: usage is 0.
func (p *Provider) embed(c *upstreams.Call) (*http.Response, error) {
	in, err := translate.DecodeEmbeddings("gemini", c)
	if err != nil {
		return nil, err
	}
	model := "models/" + p.ProviderModel(c.Model)
	out := batchEmbedRequest{Requests: make([]embedRequest, len(in.Input))}
	for i, text := range in.Input {
		out.Requests[i] = embedRequest{Model: model, Content: content{Parts: []part{{Text: text}}}, OutputDimensionality: in.Dimensions}
	}
	resp, err := p.post(c, ":batchEmbedContents", nil, out)
	if err != nil || resp.StatusCode >= 300 {
		return resp, err
	}
	var reply struct {
		Embeddings []struct {
			Values []float64 `json:"values"`
		} `json:"embeddings"`
	}
	if err := translate.DecodeReply("gemini", resp.Body, &reply); err != nil {
		return nil, err
	}
	if len(reply.Embeddings) != len(in.Input) {
		return nil, translate.BadReply("gemini")
	}
	vectors := make([][]float64, len(reply.Embeddings))
	for i, e := range reply.Embeddings {
		vectors[i] = e.Values
	}
	return translate.JSONResponse(http.StatusOK, translate.NewEmbeddings(in, vectors, 0)), nil
}
