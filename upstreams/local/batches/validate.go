package batches

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// Limits of a batch's input file, from the spec's Limits table.
const (
	maxBatchRequests        = 50000
	maxBatchEmbeddingInputs = 50000
	// maxBatchErrors bounds the errors reported for one file; the first
	// ones are enough to fix it.
	maxBatchErrors = 100
	// batchInsertChunk is how many validated requests are stored per
	// transaction.
	batchInsertChunk = 500
)

// batchEndpoints maps each endpoint a batch may name to its operation.
var batchEndpoints = map[string]string{
	"/v1/chat/completions":   upstreams.OpChatCompletionsCreate,
	"/v1/embeddings":         upstreams.OpEmbeddingsCreate,
	"/v1/completions":        upstreams.OpCompletionsCreate,
	"/v1/moderations":        upstreams.OpModerationsCreate,
	"/v1/responses":          upstreams.OpResponsesCreate,
	"/v1/images/generations": upstreams.OpImagesGenerate,
	"/v1/images/edits":       upstreams.OpImagesEdit,
}

// batchInput is what a batch's input file held, once validated.
type batchInput struct {
	total  int
	model  *string
	errors []store.BatchError
}

// inputValidator checks a batch's input file line by line, keeping only
// the custom_ids seen and the requests not yet stored.
type inputValidator struct {
	endpoint  string
	operation string
	store     func([]store.BatchRequest) error

	seen            map[string]bool
	pending         []store.BatchRequest
	embeddingInputs int
	result          batchInput
}

// validateBatchInput reads the input file as a stream (never whole) and
// hands the valid requests to store in chunks. Line numbers are 1-based;
// blank lines are skipped but counted.
func validateBatchInput(ctx context.Context, r io.Reader, endpoint string, save func([]store.BatchRequest) error) (batchInput, error) {
	v := &inputValidator{endpoint: endpoint, operation: batchEndpoints[endpoint], store: save, seen: map[string]bool{}}
	br := bufio.NewReaderSize(r, 64<<10)
	for line := 1; ; line++ {
		if err := ctx.Err(); err != nil {
			return batchInput{}, err
		}
		text, readErr := br.ReadBytes('\n')
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			return batchInput{}, fmt.Errorf("reading the input file: %w", readErr)
		}
		if text = bytes.TrimSpace(text); len(text) > 0 {
			if v.result.total == maxBatchRequests {
				v.fail("too_many_tasks", fmt.Sprintf("The input file has more than %d requests.", maxBatchRequests), "", line)
				break
			}
			if err := v.line(line, text); err != nil {
				return batchInput{}, err
			}
			if len(v.result.errors) >= maxBatchErrors {
				break
			}
		}
		if readErr != nil {
			break
		}
	}
	if v.result.total == 0 && len(v.result.errors) == 0 {
		v.fail("empty_file", "The input file has no requests.", "", 0)
	}
	if err := v.flush(); err != nil {
		return batchInput{}, err
	}
	return v.result, nil
}

// inputLine is one request of the input file.
type inputLine struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

func (v *inputValidator) line(n int, text []byte) error {
	var in inputLine
	if !json.Valid(text) {
		v.fail("invalid_json_line", "This line is not parseable as valid JSON.", "", n)
		return nil
	}
	if findings := schemas.Validate("batch_input_line", text); len(findings) > 0 {
		v.fail("invalid_request", "This line is not a batch request: "+findings[0].String(), findings[0].Path, n)
		return nil
	}
	if err := json.Unmarshal(text, &in); err != nil {
		v.fail("invalid_json_line", "This line is not parseable as a batch request.", "", n)
		return nil
	}
	if in.URL != v.endpoint {
		v.fail("url_mismatch", fmt.Sprintf("The url %q does not match the batch's endpoint %q.", in.URL, v.endpoint), "url", n)
		return nil
	}
	if v.seen[in.CustomID] {
		v.fail("duplicate_custom_id", fmt.Sprintf("The custom_id %q is used by an earlier line.", in.CustomID), "custom_id", n)
		return nil
	}
	v.seen[in.CustomID] = true
	doc, bad := schemas.ValidateRequest(v.operation, in.Body)
	if bad != nil {
		param := "body"
		if bad.Param != "" {
			param += "." + bad.Param
		}
		v.fail("invalid_request", bad.Message, param, n)
		return nil
	}
	if doc["stream"] == true {
		v.fail("invalid_request", "Batch requests cannot be streamed.", "body.stream", n)
		return nil
	}
	if model, _ := doc["model"].(string); model != "" {
		if v.result.model == nil {
			v.result.model = &model
		} else if *v.result.model != model {
			v.fail("model_mismatch", fmt.Sprintf("The model %q differs from the model %q of the batch's first request.", model, *v.result.model), "body.model", n)
			return nil
		}
	}
	if v.operation == upstreams.OpEmbeddingsCreate {
		v.embeddingInputs++
		if inputs, ok := doc["input"].([]any); ok {
			v.embeddingInputs += len(inputs) - 1
		}
		if v.embeddingInputs > maxBatchEmbeddingInputs {
			v.fail("too_many_tasks", fmt.Sprintf("The input file has more than %d embedding inputs.", maxBatchEmbeddingInputs), "body.input", n)
			return nil
		}
	}
	v.result.total++
	if len(v.result.errors) > 0 {
		return nil // the batch fails; nothing more is stored
	}
	v.pending = append(v.pending, store.BatchRequest{Line: n, CustomID: in.CustomID, Body: in.Body})
	if len(v.pending) == batchInsertChunk {
		return v.flush()
	}
	return nil
}

func (v *inputValidator) flush() error {
	if len(v.pending) == 0 || len(v.result.errors) > 0 {
		v.pending = v.pending[:0]
		return nil
	}
	if err := v.store(v.pending); err != nil {
		return err
	}
	v.pending = v.pending[:0]
	return nil
}

func (v *inputValidator) fail(code, message, param string, line int) {
	e := store.BatchError{Code: code, Message: message}
	if param != "" {
		e.Param = &param
	}
	if line > 0 {
		e.Line = &line
	}
	v.result.errors = append(v.result.errors, e)
}
