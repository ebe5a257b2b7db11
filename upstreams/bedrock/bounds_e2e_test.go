package bedrock_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/modelgate/modelgate/internal/providertest"
)

// TestBedrockHostileProvider: a Bedrock whose event-stream message
// declares 4 GiB, that floods or drips a stream with messages the
// translation skips, or sends an endless or dripping JSON reply (chat and
// embeddings) gets the client the bound's error in the envelope, the
// gateway's peak RSS bounded (providertest.RunHostile).
func TestBedrockHostileProvider(t *testing.T) {
	var skipped bytes.Buffer
	msg := eventstream.Message{Payload: []byte(`{"contentBlockIndex":0}`)}
	msg.Headers.Set(":event-type", eventstream.StringValue("contentBlockStop"))
	msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
	msg.Headers.Set(":message-type", eventstream.StringValue("event"))
	if err := eventstream.NewEncoder().Encode(&skipped, msg); err != nil {
		t.Fatal(err)
	}
	providertest.RunHostile(t, providertest.Provider{
		Kind:  "bedrock",
		Model: "claude-sonnet",
		Block: func(url string, _ bool) string {
			return fmt.Sprintf("base_url %s\n\t\t\tregion "+region+"\n\t\t\tapi_key %s\n\t\t\talias claude-sonnet %s\n\t\t\talias %s %s", url, apiKey, modelID, providertest.EmbeddingModel, titanModel)
		},
		Embeddings: true,
		StreamType: "application/vnd.amazon.eventstream",
		EventStart: prelude(0xFFFFFFFF),
		Drip:       skipped.Bytes(),
	})
}

// prelude is an event-stream message prelude declaring length bytes in
// all and no headers, with its CRC right.
func prelude(length uint32) []byte {
	b := binary.BigEndian.AppendUint32(nil, length)
	b = binary.BigEndian.AppendUint32(b, 0)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}
