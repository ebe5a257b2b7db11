package translate

import (
	"errors"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
)

// TestRefuse: every OpenAI chat field without a counterpart is a 400
// naming it when set, and passes at its default.
func TestRefuse(t *testing.T) {
	for _, tc := range []struct{ body, param string }{
		{`{"logprobs":true}`, "logprobs"},
		{`{"top_logprobs":2}`, "top_logprobs"},
		{`{"audio":{"voice":"alloy","format":"mp3"}}`, "audio"},
		{`{"frequency_penalty":0.5}`, "frequency_penalty"},
		{`{"presence_penalty":-1}`, "presence_penalty"},
		{`{"functions":[{"name":"f"}]}`, "functions"},
		{`{"function_call":"auto"}`, "function_call"},
		{`{"logit_bias":{"50256":-100}}`, "logit_bias"},
		{`{"metadata":{"k":"v"}}`, "metadata"},
		{`{"store":true}`, "store"},
		{`{"modalities":["text","audio"]}`, "modalities"},
		{`{"moderation":{"model":"omni-moderation-latest"}}`, "moderation"},
		{`{"prediction":{"type":"content","content":"x"}}`, "prediction"},
		{`{"prompt_cache_key":"k"}`, "prompt_cache_key"},
		{`{"prompt_cache_retention":"24h"}`, "prompt_cache_retention"},
		{`{"prompt_cache_options":{"x":1}}`, "prompt_cache_options"},
		{`{"reasoning_effort":"low"}`, "reasoning_effort"},
		{`{"service_tier":"flex"}`, "service_tier"},
		{`{"verbosity":"low"}`, "verbosity"},
		{`{"web_search_options":{}}`, "web_search_options"},
		{`{"web_search_options":{"search_context_size":"low"}}`, "web_search_options"},
		{`{"seed":1}`, "seed"},
		{`{"tools":[{"type":"custom","custom":{"name":"c"}}]}`, "tools[0].type"},
		{`{"temperature":1.5}`, "temperature"},
		{`{"temperature":1}`, ""},
		{`{"logprobs":false,"top_logprobs":0,"frequency_penalty":0.0,"presence_penalty":0,"modalities":["text"],"service_tier":"auto","store":false,"metadata":{},"logit_bias":null,"functions":[]}`, ""},
		{`{"service_tier":"default","modalities":[ "text" ]}`, ""},
	} {
		in, err := DecodeChat("test", &upstreams.Call{Body: []byte(tc.body)}, 1)
		if err == nil {
			err = in.Refuse("test", 1)
		}
		var ue *upstreams.Error
		switch {
		case tc.param == "" && err != nil:
			t.Errorf("%s: %v, want no error", tc.body, err)
		case tc.param != "" && (!errors.As(err, &ue) || ue.Status != 400 || ue.Param != tc.param):
			t.Errorf("%s: %v, want a 400 naming %s", tc.body, err, tc.param)
		}
	}
}

// TestBlankStop: a stop sequence of whitespace only is a 400 naming stop.
func TestBlankStop(t *testing.T) {
	for body, refused := range map[string]bool{`{"stop":" "}`: true, `{"stop":["END","\n\t"]}`: true, `{"stop":["\nEND"]}`: false, `{}`: false} {
		in, err := DecodeChat("test", &upstreams.Call{Body: []byte(body)}, 1)
		if err != nil {
			t.Fatal(err)
		}
		err = in.BlankStop("test")
		if ue, ok := errors.AsType[*upstreams.Error](err); refused != (ok && ue.Param == "stop") || (!refused && err != nil) {
			t.Errorf("%s: %v", body, err)
		}
	}
}
