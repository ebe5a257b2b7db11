package providertest

import (
	"context"
	"errors"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Chat asks the suite's gateway with openai-go, streamed (accumulated,
// every chunk accepted by the SDK's accumulator) or not.
func (s *Suite) Chat(t *testing.T, stream bool, p openai.ChatCompletionNewParams, opts ...option.RequestOption) (*openai.ChatCompletion, error) {
	t.Helper()
	ctx := context.Background()
	if !stream {
		return s.Client().Chat.Completions.New(ctx, p, opts...)
	}
	st := s.Client().Chat.Completions.NewStreaming(ctx, p, opts...)
	defer st.Close()
	acc := openai.ChatCompletionAccumulator{}
	for st.Next() {
		if !acc.AddChunk(st.Current()) {
			t.Fatalf("openai-go's accumulator refused chunk %s", st.Current().RawJSON())
		}
	}
	return &acc.ChatCompletion, st.Err()
}

// WantRefused checks err is a 400 naming param and that no request
// reached the primary provider.
func (s *Suite) WantRefused(t *testing.T, err error, param string) {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != param {
		t.Fatalf("error = %v, want a 400 naming %s", err, param)
	}
	if got := s.Primary.Requests(); len(got) != 0 {
		t.Fatalf("the refused request reached the provider: %s", got[0].Body)
	}
}
