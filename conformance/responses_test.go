package conformance_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/conformance"
	"github.com/modelgate/modelgate/internal/testgateway"
)

var responseAreas = []string{conformance.AreaResponses, conformance.AreaEmbeddings}

// responseFaults break one promise each of the Responses and embeddings
// interfaces; exactly the checks that enforce it must fail.
var responseFaults = []fault{
	{name: "conforming proxy", areas: responseAreas},
	{name: "stream sequence numbers repeat", areas: responseAreas, want: []string{"responses.stream"},
		mutate: func(_ *faultState, r *http.Request, body []byte, _ int, reply []byte) []byte {
			if r.URL.Path == "/v1/responses" && bytes.Contains(body, []byte(`"stream":true`)) {
				return bytes.ReplaceAll(reply, []byte(`"sequence_number":3`), []byte(`"sequence_number":2`))
			}
			return reply
		}},
	{name: "previous_response_id of a deleted response continues", areas: responseAreas, want: []string{"responses.previous-response-id"},
		mutate: func(_ *faultState, r *http.Request, body []byte, status int, reply []byte) []byte {
			if r.URL.Path == "/v1/responses" && status == http.StatusNotFound {
				return bytes.Replace(reply, []byte(`"param":"previous_response_id"`), []byte(`"param":null`), 1)
			}
			return reply
		}},
	{name: "base64 embeddings as floats", areas: responseAreas, want: []string{"embeddings.base64"},
		rewrite: func(r *http.Request, body []byte) []byte {
			if r.URL.Path == "/v1/embeddings" {
				return bytes.Replace(body, []byte(`"encoding_format":"base64"`), []byte(`"encoding_format":"float"`), 1)
			}
			return body
		}},
}

// TestResponsesAndEmbeddingsAreas runs the responses and embeddings checks
// against the quick start (they pass) and through each fault (exactly the
// checks it breaks fail): 25 checks, 13 of them the invariant families'.
func TestResponsesAndEmbeddingsAreas(t *testing.T) {
	expectFaults(t, testgateway.Quickstart(t, secondOwner), responseFaults, 25)
}
