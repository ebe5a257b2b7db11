package bedrock

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// embed translates embeddings.create to InvokeModel: Amazon Titan text
// embedding models take one input per request ({"inputText"}; dimensions
// -> "dimensions"), Cohere embedding models up to 96 inputs at once (see
// embedCohere). Other models are a 400.
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

// Cohere's limits on Bedrock: at most maxCohereTexts texts per call,
// and the output_dimension values Embed v4 takes (Embed v3 models have
// one dimension and take none).
const maxCohereTexts = 96

var cohereDimensions = map[int]bool{256: true, 512: true, 1024: true, 1536: true}

// embedCohere sends the inputs in calls of at most maxCohereTexts texts
// ({"texts","input_type":"search_document","embedding_types":["float"]},
// dimensions -> "output_dimension" for Embed v4) and merges the vectors
// in input order; usage sums the calls' X-Amzn-Bedrock-Input-Token-Count.
func (p *Provider) embedCohere(c *upstreams.Call, in *translate.EmbeddingsRequest, model string) (*http.Response, error) {
	body := map[string]any{"input_type": "search_document", "embedding_types": []string{"float"}}
	if in.Dimensions > 0 {
		if !strings.Contains(model, "cohere.embed-v4") || !cohereDimensions[in.Dimensions] {
			return nil, translate.Unsupported("bedrock", "dimensions", "dimensions must be 256, 512, 1024 or 1536 for Cohere Embed v4; other Cohere models take none.")
		}
		body["output_dimension"] = in.Dimensions
	}
	vectors := make([][]float64, 0, len(in.Input))
	tokens := 0
	for start := 0; start < len(in.Input); start += maxCohereTexts {
		texts := in.Input[start:min(start+maxCohereTexts, len(in.Input))]
		body["texts"] = texts
		resp, err := p.post(c, model, "/invoke", body)
		if err != nil || resp.StatusCode >= 300 {
			return resp, err
		}
		got, err := cohereVectors(resp)
		if err != nil {
			return nil, err
		}
		if len(got) != len(texts) {
			return nil, translate.BadReply("bedrock")
		}
		vectors = append(vectors, got...)
		n, _ := strconv.Atoi(resp.Header.Get("X-Amzn-Bedrock-Input-Token-Count"))
		tokens += n
	}
	return translate.JSONResponse(http.StatusOK, translate.NewEmbeddings(in, vectors, tokens)), nil
}

// cohereVectors reads a Cohere reply's vectors: "embeddings" is the
// vectors ("embeddings_floats") or, by type, {"float": vectors}.
func cohereVectors(resp *http.Response) ([][]float64, error) {
	var reply struct {
		Embeddings json.RawMessage `json:"embeddings"`
	}
	if err := translate.DecodeReply("bedrock", resp.Body, &reply); err != nil {
		return nil, err
	}
	var vectors [][]float64
	if json.Unmarshal(reply.Embeddings, &vectors) == nil {
		return vectors, nil
	}
	var byType struct {
		Float [][]float64 `json:"float"`
	}
	if json.Unmarshal(reply.Embeddings, &byType) != nil {
		return nil, translate.BadReply("bedrock")
	}
	return byType.Float, nil
}
