package schemas

import (
	"math/rand/v2"
	"strings"
	"testing"
)

const goodStream = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}

data: [DONE]

`

func check(stream string, rng *rand.Rand) []Finding {
	c := NewStreamChecker()
	for len(stream) > 0 {
		n := 1 + rng.IntN(len(stream))
		c.Write([]byte(stream[:n]))
		stream = stream[n:]
	}
	return c.Close()
}

func TestStreamCheckerAcceptsAGoodStreamInAnySplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 100; i++ {
		if f := check(goodStream, rng); len(f) != 0 {
			t.Fatalf("findings on a good stream: %v", f)
		}
	}
}

func TestStreamCheckerFindsBreakage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tests := map[string]struct{ stream, want string }{
		"no [DONE]":             {strings.Replace(goodStream, "data: [DONE]\n\n", "", 1), "without data: [DONE]"},
		"delta without index":   {strings.Replace(goodStream, `"tool_calls":[{"index":0,"function"`, `"tool_calls":[{"function"`, 1), "index"},
		"two finish reasons":    {strings.Replace(goodStream, `"delta":{"role":"assistant","content":""},"finish_reason":null`, `"delta":{"role":"assistant","content":""},"finish_reason":"stop"`, 1), "second finish_reason"},
		"never finished":        {strings.Replace(goodStream, `"finish_reason":"tool_calls"`, `"finish_reason":null`, 1), "never got a finish_reason"},
		"bad json":              {strings.Replace(goodStream, `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],`, `{"id":"c1",,`, 1), "not JSON"},
		"wrong object":          {strings.Replace(goodStream, `"object":"chat.completion.chunk"`, `"object":"chat.completion"`, 1), "must be"},
		"changing id":           {strings.Replace(goodStream, `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},`, `{"id":"c2","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},`, 1), "differs"},
		"cut mid-event":         {goodStream[:len(goodStream)-30], "inside an event"},
		"data after done":       {goodStream + "data: {}\n\n", "after [DONE]"},
		"empty chunk, no usage": {strings.Replace(goodStream, `"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}`, `"choices":[]`, 1), "must carry usage"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			findings := check(tc.stream, rng)
			for _, f := range findings {
				if strings.Contains(f.String(), tc.want) {
					return
				}
			}
			t.Fatalf("findings %v lack %q", findings, tc.want)
		})
	}
}
