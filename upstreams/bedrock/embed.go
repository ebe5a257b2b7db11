package bedrock

import (
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// embed translates embeddings.create to InvokeModel: Amazon Titan text
// embedding models take one input per request ({"inputText"}; dimensions
// -> "dimensions"), Cohere embedding models all inputs at once
// ({"texts","input_type":"search_document"}). Other models are a 400.
func (p *Provider) embed(c *upstreams.Call) (*http.Response, error) {
	in, err := translate.DecodeEmbeddings("bedrock", c)
	if err != nil {
		return nil, err
	}
	model := p.ProviderModel(c.Model)
	switch {
	case strings.Contains(model, "cohere.embed"):
		return p.embedCohere(c, in, model)
	case strings.Contains(model, "amazon.titan-embed"):
		return p.embedTitan(c, in, model)
	}
	return nil, translate.Unsupported("bedrock", "model", "Bedrock embeddings are served for Amazon Titan and Cohere embedding models, not %q.", model)
}

func (p *Provider) embedTitan(c *upstreams.Call, in *translate.EmbeddingsRequest, model string) (*http.Response, error) {
	vectors := make([][]float64, len(in.Input))
	tokens := 0
	for i, text := range in.Input {
		body := map[string]any{"inputText": text}
		if in.Dimensions > 0 {
			body["dimensions"] = in.Dimensions
		}
		resp, err := p.post(c, model, "/invoke", body)
		if err != nil || resp.StatusCode >= 300 {
			return resp, err
		}
		var reply struct {
			Embedding           []float64 `json:"embedding"`
			InputTextTokenCount int       `json:"inputTextTokenCount"`
		}
		if err := translate.DecodeReply("bedrock", resp.Body, &reply); err != nil {
			return nil, err
		}
		vectors[i] = reply.Embedding
		tokens = upstreams.SumTokens(tokens, reply.InputTextTokenCount)
	}
	return translate.JSONResponse(http.StatusOK, translate.NewEmbeddings(in, vectors, tokens)), nil
}

func (p *Provider) embedCohere(c *upstreams.Call, in *translate.EmbeddingsRequest, model string) (*http.Response, error) {
	resp, err := p.post(c, model, "/invoke", map[string]any{"texts": in.Input, "input_type": "search_document"})
	if err != nil || resp.StatusCode >= 300 {
		return resp, err
	}
	var reply struct {
		Embeddings [][]float64 `json:"embeddings"`
	}
	if err := translate.DecodeReply("bedrock", resp.Body, &reply); err != nil {
		return nil, err
	}
	if len(reply.Embeddings) != len(in.Input) {
		return nil, translate.BadReply("bedrock")
	}
	return translate.JSONResponse(http.StatusOK, translate.NewEmbeddings(in, reply.Embeddings, 0)), nil
}
