package azure

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/streambench"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// BenchmarkStreamEvent is the cost per Azure stream event of a 100-chunk
// stream passed through the content-filter filter. Azure requests and
// non-streamed replies are not translated (no cost beyond the relay).
func BenchmarkStreamEvent(b *testing.B) {
	var s strings.Builder
	s.WriteString(`data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{}}]}` + "\n\n")
	for i := range 100 {
		fmt.Fprintf(&s, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"token %d "},"finish_reason":null,"content_filter_results":{}}]}`+"\n\n", i)
	}
	s.WriteString("data: [DONE]\n\n")
	stream := []byte(s.String())
	streambench.Run(b, 102, func() io.ReadCloser {
		body := io.NopCloser(bytes.NewReader(stream))
		return translate.StreamResponse(&filter{events: translate.NewEventReader(body)}, &translate.ChunkWriter{}, body).Body
	})
}
