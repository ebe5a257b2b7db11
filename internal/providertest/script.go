package providertest

// The scripted model every fake plays: what a request asks decides the
// answer, so the suite can check each translation end to end.
const (
	// Greeting answers a plain question.
	Greeting = "Hello from the fake provider."
	// ToolName, ToolArgs and ToolCallID are the tool call the model makes
	// when offered tools and no tool result is in the conversation yet.
	ToolName   = "get_weather"
	ToolArgs   = `{"city":"Paris"}`
	ToolCallID = "call_weather_1"
	// ToolResult is what the client answers the call with, and AfterTool
	// what the model says once it has read it.
	ToolResult = `{"temperature":21}`
	AfterTool  = "It is 21 degrees in Paris."
	// SchemaName and Structured are the structured-output request's schema
	// name and the JSON the model answers it with.
	SchemaName = "city_answer"
	Structured = `{"city":"Paris"}`
	// ImageMediaType and ImageData are the image part the client sends
	// (a 1x1 PNG), and ImageSeen what the model says about it.
	ImageMediaType = "image/png"
	ImageData      = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	ImageSeen      = "I see one red pixel."
	// Usage of every scripted answer: prompt (of which cached) and
	// completion (of which reasoning) tokens, where the provider reports
	// them.
	PromptTokens     = 11
	CachedTokens     = 3
	CompletionTokens = 7
)

// Answer is what the scripted model says to a request.
type Answer int

// The answers.
const (
	AnswerGreeting Answer = iota
	AnswerToolCall
	AnswerAfterTool
	AnswerStructured
	AnswerImage
)

// Ask tells what a request asks from what the fake found in it.
func Ask(hasToolResult, offersTools, structured, hasImage bool) Answer {
	switch {
	case structured:
		return AnswerStructured
	case hasToolResult:
		return AnswerAfterTool
	case offersTools:
		return AnswerToolCall
	case hasImage:
		return AnswerImage
	}
	return AnswerGreeting
}

// Text is the answer's text (the JSON for a structured answer; "" for a
// tool call).
func (a Answer) Text() string {
	switch a {
	case AnswerAfterTool:
		return AfterTool
	case AnswerStructured:
		return Structured
	case AnswerImage:
		return ImageSeen
	case AnswerToolCall:
		return ""
	}
	return Greeting
}

// Split cuts s into pieces of at most 8 bytes, as a stream sends them.
func Split(s string) []string {
	var out []string
	for len(s) > 8 {
		out = append(out, s[:8])
		s = s[8:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// EmbeddingModel is the model the embeddings scenario names.
const EmbeddingModel = "text-embedding-3-small"

// Embedding is the scripted vector of input i (exact in float32).
func Embedding(i int) []float64 {
	return []float64{0.5, -0.25, float64(i)}
}
