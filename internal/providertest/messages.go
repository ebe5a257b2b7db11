package providertest

import (
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// refusalText is an assistant's earlier refusal, sent back as text.
const refusalText = "I cannot share the forecast."

// MessageFields, for a provider that translates chat messages: every
// per-message field of the request schema is translated or refused
// (streamed and not) with a 400 naming it, never dropped. A participant
// name (any role), an assistant's audio and deprecated function_call
// and an image part's detail other than auto are refused; an assistant's
// refusal reaches the provider as text.
func (s *Suite) MessageFields(t *testing.T) {
	user := func(m openai.ChatCompletionUserMessageParam) openai.ChatCompletionMessageParamUnion {
		return openai.ChatCompletionMessageParamUnion{OfUser: &m}
	}
	assistant := func(m openai.ChatCompletionAssistantMessageParam) openai.ChatCompletionMessageParamUnion {
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &m}
	}
	earlier := openai.ChatCompletionAssistantMessageParamContentUnion{OfString: openai.String("Earlier answer.")}
	ask := openai.UserMessage("Say hello.")
	s.Primary.Requests() // what earlier scenarios sent
	for _, c := range []struct {
		param string
		msgs  []openai.ChatCompletionMessageParamUnion
	}{
		{"messages[0].name", []openai.ChatCompletionMessageParamUnion{{OfSystem: &openai.ChatCompletionSystemMessageParam{Name: openai.String("rules"),
			Content: openai.ChatCompletionSystemMessageParamContentUnion{OfString: openai.String("Be brief.")}}}, ask}},
		{"messages[0].name", []openai.ChatCompletionMessageParamUnion{user(openai.ChatCompletionUserMessageParam{Name: openai.String("alice"),
			Content: openai.ChatCompletionUserMessageParamContentUnion{OfString: openai.String("Say hello.")}})}},
		{"messages[1].name", []openai.ChatCompletionMessageParamUnion{ask, assistant(openai.ChatCompletionAssistantMessageParam{Name: openai.String("bot"), Content: earlier}), ask}},
		{"messages[1].audio", []openai.ChatCompletionMessageParamUnion{ask, assistant(openai.ChatCompletionAssistantMessageParam{Audio: openai.ChatCompletionAssistantMessageParamAudio{ID: "audio_1"}, Content: earlier}), ask}},
		{"messages[1].function_call", []openai.ChatCompletionMessageParamUnion{ask, assistant(openai.ChatCompletionAssistantMessageParam{
			FunctionCall: openai.ChatCompletionAssistantMessageParamFunctionCall{Name: ToolName, Arguments: ToolArgs}, Content: earlier}), ask}},
		{"messages[0].content[0].image_url.detail", []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:" + ImageMediaType + ";base64," + ImageData, Detail: "high"}),
		})}},
	} {
		for _, stream := range []bool{false, true} {
			_, err := s.Chat(t, stream, s.params(c.msgs...))
			s.WantRefused(t, err, c.param)
		}
	}
	for _, stream := range []bool{false, true} {
		s.calls++
		got, err := s.Chat(t, stream, s.params(ask, assistant(openai.ChatCompletionAssistantMessageParam{Refusal: openai.String(refusalText)}), ask))
		if err != nil || got.Choices[0].Message.Content != Greeting {
			t.Fatalf("an assistant's refusal (stream %v): %v %+v", stream, err, got)
		}
		sent := s.Primary.Requests()
		if len(sent) != 1 || !strings.Contains(string(sent[0].Body), refusalText) {
			t.Fatalf("the assistant's refusal did not reach the provider (stream %v)", stream)
		}
	}
}
