package bedrock

import (
	"bytes"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/modelgate/modelgate/upstreams"
)

// TestFramesBound: a message of exactly the bound is decoded whole, and
// the next read is io.EOF's; with the bound one byte lower it is refused
// as too large before its payload is read.
func TestFramesBound(t *testing.T) {
	var buf bytes.Buffer
	msg := eventstream.Message{Payload: bytes.Repeat([]byte("p"), 1000)}
	msg.Headers.Set(":event-type", eventstream.StringValue("contentBlockStop"))
	if err := eventstream.NewEncoder().Encode(&buf, msg); err != nil {
		t.Fatal(err)
	}
	size := int64(buf.Len())
	f := &frames{body: bytes.NewReader(buf.Bytes()), limit: size}
	got, err := f.decode(eventstream.NewDecoder(), nil)
	if err != nil || !bytes.Equal(got.Payload, msg.Payload) {
		t.Fatalf("message of %d bytes, bound %d: %v", size, size, err)
	}
	if _, err := f.decode(eventstream.NewDecoder(), nil); err == nil {
		t.Fatal("decoded a message past the end")
	}
	f = &frames{body: bytes.NewReader(buf.Bytes()), limit: size - 1}
	if _, err := f.decode(eventstream.NewDecoder(), nil); !errors.Is(err, upstreams.ErrEventTooLarge) {
		t.Fatalf("message of %d bytes, bound %d: %v", size, size-1, err)
	}
}
