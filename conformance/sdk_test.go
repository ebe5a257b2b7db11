package conformance_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/conformance"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestRecordedSDKSessionIsClean records a session of the official Go SDK
// (chat with tools, streamed with usage, files, threads, vector stores,
// search, a batch) through a gateway with `record`, and holds the suite's
// record checks to find nothing in it: the checks fail no traffic a real
// client and a conforming server exchange.
func TestRecordedSDKSessionIsClean(t *testing.T) {
	recording := filepath.Join(t.TempDir(), "sdk.jsonl")
	base := testgateway.Quickstart(t, "\t\trecord "+recording+"\n")
	ctx := context.Background()
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(devKey), option.WithMaxRetries(0),
		option.WithHeader("Vendor-Beta", "assistants=v2"))
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	tool := openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_weather",
		Parameters: openai.FunctionParameters{"type": "object", "required": []string{"city"}, "properties": map[string]any{"city": map[string]any{"type": "string"}}}})
	params := openai.ChatCompletionNewParams{Model: "reference", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		Tools: []openai.ChatCompletionToolUnionParam{tool}, ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}}
	_, err := client.Chat.Completions.New(ctx, params)
	must("chat", err)
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := client.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	must("stream", stream.Err())
	if len(acc.Choices) == 0 || len(acc.Choices[0].Message.ToolCalls) == 0 {
		t.Fatalf("the streamed reply has no tool call: %+v", acc.ChatCompletion)
	}
	_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "reference", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Write a long story.")},
		MaxCompletionTokens: openai.Int(3), N: openai.Int(2)})
	must("chat with a limit", err)

	f, err := client.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader([]byte("The river Thames flows through London.")), "river notes - v2.txt", "text/plain"), Purpose: openai.FilePurposeAssistants})
	must("upload", err)
	_, err = client.Files.List(ctx, openai.FileListParams{Limit: openai.Int(2), Order: openai.FileListParamsOrderAsc})
	must("files list", err)
	_, err = client.Files.Get(ctx, f.ID)
	must("file get", err)

	th, err := client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{Metadata: shared.Metadata{"k": "v"}})
	must("thread", err)
	_, err = client.Beta.Threads.Update(ctx, th.ID, openai.BetaThreadUpdateParams{Metadata: shared.Metadata{"k": "w"}})
	must("thread update", err)
	_, err = client.Beta.Threads.Delete(ctx, th.ID)
	must("thread delete", err)

	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("sdk")})
	must("vector store", err)
	_, err = client.VectorStores.Files.NewAndPoll(ctx, vs.ID, openai.VectorStoreFileNewParams{FileID: f.ID}, 20)
	must("attach", err)
	_, err = client.VectorStores.Files.List(ctx, vs.ID, openai.VectorStoreFileListParams{Order: openai.VectorStoreFileListParamsOrderDesc})
	must("vector store files", err)
	_, err = client.VectorStores.Search(ctx, vs.ID, openai.VectorStoreSearchParams{Query: openai.VectorStoreSearchParamsQueryUnion{OfString: openai.String("Thames")}})
	must("search", err)

	line := `{"custom_id":"r0","method":"POST","url":"/v1/chat/completions","body":{"model":"reference","messages":[{"role":"user","content":"Hi"}]}}` + "\n"
	in, err := client.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader(line), "batch.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
	must("batch input", err)
	b, err := client.Batches.New(ctx, openai.BatchNewParams{InputFileID: in.ID, Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	must("batch", err)
	_, err = client.Batches.Get(ctx, b.ID)
	must("batch get", err)
	_, err = client.Files.Delete(ctx, f.ID)
	must("file delete", err)

	// Serving another gateway unloads this one, whose recorder then
	// writes every queued record.
	testgateway.Quickstart(t, "")
	results, err := conformance.CheckRecords(recording)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if bad, _ := conformance.WriteRecordFindings(&out, results); bad > 0 || len(results) < 15 {
		t.Fatalf("%d records of the SDK session, %d with findings:\n%s", len(results), bad, out.String())
	}
}
