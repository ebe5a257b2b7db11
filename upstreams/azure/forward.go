package azure

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// ServeCall forwards the call and relays Azure's answer.
func (p *Provider) ServeCall(w http.ResponseWriter, c *upstreams.Call) error {
	return p.Serve(w, p, c)
}

// Forward sends the call to the model's deployment and returns the reply:
// successes as Azure sent them (streams without the chunks that are no
// chat.completion.chunk), failures as the public envelope with Azure's
// status.
func (p *Provider) Forward(c *upstreams.Call) (*http.Response, error) {
	path := "/chat/completions"
	if c.Operation == upstreams.OpEmbeddingsCreate {
		path = "/embeddings"
	}
	deployment := p.ProviderModel(c.Model)
	if deployment == "." || deployment == ".." {
		return nil, upstreams.InvalidRequest("model", "The model %q names no Azure deployment.", c.Model)
	}
	body := c.Body
	var target string
	if p.APIVersion == APIVersionV1 {
		// The v1 API takes the deployment as the body's model.
		if deployment != c.Model {
			var err error
			if body, err = sjson.SetBytes(c.Body, "model", deployment); err != nil {
				return nil, upstreams.InvalidRequest("", "The request body could not be read.")
			}
		}
		target = p.URL("/openai/v1"+path, nil)
	} else {
		target = p.URL("/openai/deployments/"+url.PathEscape(deployment)+path, url.Values{"api-version": {p.APIVersion}})
	}
	req, err := http.NewRequestWithContext(c.Request.Context(), http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, upstreams.ServerError("The request could not be forwarded.")
	}
	req.Header.Set("Content-Type", "application/json")
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	} else {
		req.Header.Set("Api-Key", p.Key)
	}
	resp, err := p.Send(c, req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode >= 300:
		return azureError(resp), nil
	case upstreams.IsEventStream(resp.Header):
		return translate.StreamResponse(&filter{events: translate.NewEventReader(resp.Body)}, &translate.ChunkWriter{}, resp.Body), nil
	}
	return resp, nil
}

// azureError maps Azure's error reply ({"error":{"code","message"}}) to
// the envelope with Azure's status and Retry-After.
func azureError(resp *http.Response) *http.Response {
	var body struct {
		Error struct {
			Code    any    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(translate.ReadError(resp), &body)
	code, _ := body.Error.Code.(string)
	return translate.ProviderError("azure", resp.StatusCode, resp.Header, code, body.Error.Message)
}

// filter relays Azure's stream event by event, leaving out the events
// that are no chat.completion.chunk (their object is ""): the one with
// prompt_filter_results before the first token, and the annotations of
// the asynchronous content filter (empty id, no delta, only
// content_filter_results), which the SDKs' stream accumulators refuse.
type filter struct {
	events *translate.EventReader
	done   bool
}

func (f *filter) Next(w *translate.ChunkWriter) error {
	if f.done {
		return io.EOF
	}
	ev, err := f.events.Next()
	if err != nil {
		return translate.Cut(err)
	}
	if string(bytes.TrimSpace(ev.Data)) == "[DONE]" {
		f.done = true
		w.Raw(ev.Raw)
		return nil
	}
	if gjson.GetBytes(ev.Data, "object").Str != "chat.completion.chunk" {
		return nil
	}
	w.Raw(ev.Raw)
	return nil
}
