package bedrock

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// minFrame is the smallest event-stream message: its prelude (total and
// headers length, prelude CRC) and message CRC.
const minFrame = 16

// frames reads a ConverseStream body one event-stream message at a time,
// each length checked before the decoder reads it: the eventstream decoder
// reads as many bytes as a prelude declares (up to 4 GiB), so a message
// declaring more than the reply's translate.BufferLimit is refused before
// any of it is read, and the decoder never reads past the message.
type frames struct {
	body  io.Reader
	limit int64
	// length is the message's total length, read first and handed to the
	// decoder again; head is what of it the decoder has not read yet, and
	// left what it may still read of the message after it.
	length [4]byte
	head   []byte
	left   int64
}

func newFrames(body io.Reader) *frames {
	return &frames{body: body, limit: int64(translate.BufferLimit(body))}
}

// decode reads the next message into payload (see eventstream's Decode):
// io.EOF between messages, upstreams.ErrEventTooLarge for a message
// declaring more than the bound.
func (f *frames) decode(d *eventstream.Decoder, payload []byte) (eventstream.Message, error) {
	if _, err := io.ReadFull(f.body, f.length[:]); err != nil {
		return eventstream.Message{}, err
	}
	n := int64(binary.BigEndian.Uint32(f.length[:]))
	switch {
	case n > f.limit:
		return eventstream.Message{}, fmt.Errorf("bedrock: a message of %d bytes: %w", n, upstreams.ErrEventTooLarge)
	case n < minFrame:
		return eventstream.Message{}, fmt.Errorf("bedrock: a message of %d bytes, below the minimum %d", n, minFrame)
	}
	f.head, f.left = f.length[:], n-int64(len(f.length))
	return d.Decode(f, payload)
}

// Read hands the decoder the current message: its length, then the rest
// of it from the body.
func (f *frames) Read(p []byte) (int, error) {
	if len(f.head) > 0 {
		n := copy(p, f.head)
		f.head = f.head[n:]
		return n, nil
	}
	if f.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > f.left {
		p = p[:f.left]
	}
	n, err := f.body.Read(p)
	f.left -= int64(n)
	return n, err
}
