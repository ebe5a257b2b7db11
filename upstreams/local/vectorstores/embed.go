package vectorstores

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// embedBatch is how many texts one embeddings request carries.
const embedBatch = 64

// maxRateLimitWaits is how many times a 429 (the caller's own limits or
// the provider's) is waited out before the embeddings count as failed.
const maxRateLimitWaits = 8

// errNoGateway: the local upstream is used outside a gateway, which is
// what routes embeddings.
var errNoGateway = errors.New("no gateway to route embeddings through")

// embedder asks the gateway's embeddings route for vectors, in batches,
// on a caller's behalf.
type embedder struct {
	dispatcher func() upstreams.Dispatcher
}

// embed returns one unit-length vector per text. A failure of the
// embeddings route is a *FileError (server_error); a context error is
// returned as is.
func (e embedder) embed(ctx context.Context, who upstreams.Principal, model string, texts []string) ([][]float32, error) {
	d := e.dispatcher()
	if d == nil {
		return nil, &FileError{Code: codeServerError, Message: errNoGateway.Error()}
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += embedBatch {
		batch := texts[start:min(start+embedBatch, len(texts))]
		vecs, err := embedOnce(ctx, d, who, model, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func embedOnce(ctx context.Context, d upstreams.Dispatcher, who upstreams.Principal, model string, texts []string) ([][]float32, error) {
	body, err := json.Marshal(map[string]any{"model": model, "input": texts, "encoding_format": "float"})
	if err != nil {
		return nil, fmt.Errorf("encoding embeddings request: %w", err)
	}
	for waits := 0; ; waits++ {
		reply, err := d.Dispatch(ctx, upstreams.OpEmbeddingsCreate, who, body)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &FileError{Code: codeServerError, Message: "The embeddings could not be requested from their upstream."}
		}
		if reply.Status == http.StatusTooManyRequests && waits < maxRateLimitWaits && !upstreams.NoRetry(reply.Header) {
			if !upstreams.Sleep(ctx, min(upstreams.RetryAfter(reply.Header, time.Second), time.Minute)) {
				return nil, ctx.Err()
			}
			continue
		}
		if reply.Status != http.StatusOK {
			return nil, &FileError{Code: codeServerError, Message: refusal(reply)}
		}
		return decodeEmbeddings(reply.Body, len(texts))
	}
}

// refusal says why the embeddings route did not answer 200: its status and,
// when the reply is an error envelope (a refusal by the gateway, say), its
// message.
func refusal(reply *upstreams.Reply) string {
	msg := "The embeddings route answered with status " + strconv.Itoa(reply.Status)
	var env upstreams.Envelope
	if json.Unmarshal(reply.Body, &env) == nil && env.Error.Message != "" {
		return msg + ": " + env.Error.Message
	}
	return msg + "."
}

// decodeEmbeddings reads an embeddings response: one vector per input,
// placed by index, all of one dimension; vectors are normalised to unit
// length so that a dot product is the cosine similarity.
func decodeEmbeddings(body []byte, n int) ([][]float32, error) {
	var resp struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	malformed := func(why string) error {
		return &FileError{Code: codeServerError, Message: "The embeddings route answered with a malformed response: " + why + "."}
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, malformed("not the embeddings JSON")
	}
	if len(resp.Data) != n {
		return nil, malformed(fmt.Sprintf("%d embeddings for %d inputs", len(resp.Data), n))
	}
	out := make([][]float32, n)
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, malformed("embedding indexes do not match the inputs")
		}
		if len(d.Embedding) == 0 || len(d.Embedding) != len(resp.Data[0].Embedding) {
			return nil, malformed("embeddings of different dimensions")
		}
		out[d.Index] = store.Normalize(d.Embedding)
	}
	return out, nil
}
