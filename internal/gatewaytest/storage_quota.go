package gatewaytest

import (
	"context"

	"github.com/openai/openai-go/v3"
)

// NewBatch creates a chat completions batch on the input file.
func NewBatch(client openai.Client, fileID string) (*openai.Batch, error) {
	return client.Batches.New(context.Background(), openai.BatchNewParams{InputFileID: fileID,
		Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
}
