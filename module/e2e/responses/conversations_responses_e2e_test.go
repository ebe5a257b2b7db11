package responses

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// testResponsesInConversations: a response created with `conversation`
// (an ID, or an object with one; streamed or not) is made from the
// conversation's items followed by its input (the same prompt and reply
// as sending them all as input), and its input and output are appended
// to the conversation, a tool call's round trip included; with
// previous_response_id too it is a 400, and an unknown conversation 404.
func testResponsesInConversations(t *testing.T, base, key string) {
	ctx := context.Background()
	client := gatewaytest.SDK(base, option.WithAPIKey(key))
	conv, err := client.Conversations.New(ctx, conversations.ConversationNewParams{Items: []responses.ResponseInputItemUnionParam{
		userMessage("Tell me about rivers"), responses.ResponseInputItemParamOfMessage("Rivers flow.", responses.EasyInputMessageRoleAssistant)}})
	if err != nil {
		t.Fatal(err)
	}
	inConv := func(id string) responses.ResponseNewParamsConversationUnion {
		return responses.ResponseNewParamsConversationUnion{OfString: openai.String(id)}
	}
	first, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("And lakes?"), Conversation: inConv(conv.ID)})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Store: openai.Bool(false), Input: responses.ResponseNewParamsInputUnion{
		OfInputItemList: responses.ResponseInputParam{userMessage("Tell me about rivers"),
			responses.ResponseInputItemParamOfMessage("Rivers flow.", responses.EasyInputMessageRoleAssistant), userMessage("And lakes?")}}})
	if err != nil {
		t.Fatal(err)
	}
	if first.Conversation.ID != conv.ID || first.OutputText() != alone.OutputText() || first.Usage.InputTokens != alone.Usage.InputTokens {
		t.Fatalf("the response in the conversation %s\nis not the one of its items and input sent together %s", first.RawJSON(), alone.RawJSON())
	}
	texts := func() []string {
		t.Helper()
		var out []string
		iter := client.Conversations.Items.ListAutoPaging(ctx, conv.ID, conversations.ItemListParams{Order: conversations.ItemListParamsOrderAsc})
		for iter.Next() {
			it := iter.Current()
			switch it.Type {
			case "message":
				out = append(out, messageText(it))
			default:
				out = append(out, it.Type)
			}
		}
		if iter.Err() != nil {
			t.Fatal(iter.Err())
		}
		return out
	}
	want := []string{"Tell me about rivers", "Rivers flow.", "And lakes?", first.OutputText()}
	if got := texts(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the conversation after a response:\n%q\nwant\n%q", got, want)
	}
	last, err := client.Conversations.Items.Get(ctx, conv.ID, first.Output[0].ID, conversations.ItemGetParams{})
	if err != nil || last.Role != "assistant" || messageText(*last) != first.OutputText() {
		t.Fatalf("the response's output item in the conversation: %v %+v", err, last)
	}

	// Streamed, with the conversation as an object: appended once complete.
	stream := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "reference", Input: text("And seas?"),
		Conversation: responses.ResponseNewParamsConversationUnion{OfConversationObject: &responses.ResponseConversationParam{ID: conv.ID}}})
	var streamed responses.Response
	for stream.Next() {
		if ev := stream.Current(); ev.Type == "response.completed" {
			streamed = ev.AsResponseCompleted().Response
		}
	}
	if stream.Err() != nil || streamed.Conversation.ID != conv.ID || streamed.Usage.InputTokens <= first.Usage.InputTokens {
		t.Fatalf("streamed in the conversation: %v %s", stream.Err(), streamed.RawJSON())
	}
	want = append(want, "And seas?", streamed.OutputText())
	if got := texts(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the conversation after a streamed response:\n%q\nwant\n%q", got, want)
	}

	// A tool call answered in the next response of the conversation: the
	// call comes from the conversation, its output from the input.
	call, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("Use get_weather for Paris"),
		Tools: []responses.ToolUnionParam{weatherTool}, Conversation: inConv(conv.ID)})
	if err != nil || len(call.Output) != 1 || call.Output[0].Type != "function_call" {
		t.Fatalf("tool call: %v %s", err, call.RawJSON())
	}
	result := responses.ResponseInputItemParamOfFunctionCallOutput("sunny and 21C")
	result.OfFunctionCallOutput.CallID = openai.String(call.Output[0].AsFunctionCall().CallID)
	answer, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Tools: []responses.ToolUnionParam{weatherTool},
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{result}}, Conversation: inConv(conv.ID)})
	if err != nil || !strings.Contains(answer.OutputText(), "sunny and 21C") {
		t.Fatalf("tool result: %v %s", err, answer.RawJSON())
	}
	want = append(want, "Use get_weather for Paris", "function_call", "function_call_output", answer.OutputText())
	if got := texts(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the conversation after a tool call:\n%q\nwant\n%q", got, want)
	}

	_, err = client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("x"), Conversation: inConv(conv.ID),
		PreviousResponseID: openai.String(first.ID)})
	if e := gatewaytest.AsAPIError(t, err); e.StatusCode != 400 || e.Param != "conversation" || !strings.Contains(e.Message, "previous_response_id") {
		t.Fatalf("conversation with previous_response_id: %v", err)
	}
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("x"), Conversation: inConv("conv_missing")})
	if e := gatewaytest.AsAPIError(t, err); e.StatusCode != 404 || e.Param != "conversation" {
		t.Fatalf("an unknown conversation: %v", err)
	}
	if got := texts(); len(got) != len(want) {
		t.Fatalf("refused responses changed the conversation: %q", got)
	}
}

// TestConversationHistoryIsPagedAndBounded: a response reads a
// conversation of more items than a page (100) whole, the same prompt as
// its items sent as input, and a conversation holding more than
// max_body_size bytes is refused with context_length_exceeded naming
// conversation, the read stopping there.
func TestConversationHistoryIsPagedAndBounded(t *testing.T) {
	client := gatewaytest.SDK(testgateway.Quickstart(t, "max_body_size 32KiB\n"), option.WithAPIKey(testgateway.QuickstartDevKey))
	ctx := context.Background()
	add := func(id string, texts ...string) {
		t.Helper()
		items := make([]responses.ResponseInputItemUnionParam, len(texts))
		for i, s := range texts {
			items[i] = userMessage(s)
		}
		if _, err := client.Conversations.Items.New(ctx, id, conversations.ItemNewParams{Items: items}); err != nil {
			t.Fatal(err)
		}
	}
	long, err := client.Conversations.New(ctx, conversations.ConversationNewParams{})
	if err != nil {
		t.Fatal(err)
	}
	var all responses.ResponseInputParam
	for i := range 6 {
		batch := make([]string, 20)
		for j := range batch {
			batch[j] = fmt.Sprintf("turn %d", i*20+j)
			all = append(all, userMessage(batch[j]))
		}
		add(long.ID, batch...)
	}
	in, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("last"), MaxOutputTokens: openai.Int(16),
		Conversation: responses.ResponseNewParamsConversationUnion{OfString: openai.String(long.ID)}})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", MaxOutputTokens: openai.Int(16), Store: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: append(all, userMessage("last"))}})
	if err != nil || in.Usage.InputTokens != alone.Usage.InputTokens || in.OutputText() != alone.OutputText() {
		t.Fatalf("a conversation of 120 items read as %d prompt tokens, its items as input %d: %v", in.Usage.InputTokens, alone.Usage.InputTokens, err)
	}

	big, err := client.Conversations.New(ctx, conversations.ConversationNewParams{})
	if err != nil {
		t.Fatal(err)
	}
	turn := strings.Repeat("a long turn ", 512) // 6 KiB
	ask := func() error {
		_, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("x"), MaxOutputTokens: openai.Int(16),
			Conversation: responses.ResponseNewParamsConversationUnion{OfString: openai.String(big.ID)}})
		return err
	}
	add(big.ID, turn, turn, turn, turn) // 24 KiB
	if err := ask(); err != nil {
		t.Fatalf("24 KiB of conversation: %v", err)
	}
	add(big.ID, turn, turn) // 36 KiB
	if e := gatewaytest.AsAPIError(t, ask()); e.StatusCode != 400 || e.Code != "context_length_exceeded" || e.Param != "conversation" {
		t.Fatalf("36 KiB of conversation: %v", e)
	}
}
