package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Timestamps: every created/created_at is a Unix time in seconds. A value
// in milliseconds (or microseconds) is a thousand times too large, so a
// value more than a day from the suite's clock is refused: clocks may
// drift, units may not.

const specSeconds = "Batch, Thread, VectorStoreFile `created_at` and ChatCompletion `created`: Unix timestamp in seconds. (Public API: files and vector stores too; every chunk's `created`.)"

// plausibleSkew bounds how far a timestamp may be from the suite's clock.
const plausibleSkew = 24 * time.Hour

// expectSeconds holds a timestamp field of a reply to be seconds near now.
func (t *T) expectSeconds(ex *exchange, field string, v int64) {
	now := time.Now().Unix()
	skew := int64(plausibleSkew / time.Second)
	t.expect(v > now-skew && v < now+skew, ex, fmt.Sprintf("%s in Unix seconds, near %d", field, now), "%d (%s)", v, unitGuess(v, now))
}

// unitGuess names the unit a wrong timestamp seems to be in.
func unitGuess(v, now int64) string {
	switch {
	case v > now*500 && v < now*2000:
		return "milliseconds"
	case v > now*500_000 && v < now*2_000_000:
		return "microseconds"
	default:
		return "not near the current time"
	}
}

// createdAt reads created_at (or created) of a JSON object.
func createdAt(body []byte) (int64, string) {
	var o struct {
		Created   *int64 `json:"created"`
		CreatedAt *int64 `json:"created_at"`
	}
	json.Unmarshal(body, &o)
	switch {
	case o.CreatedAt != nil:
		return *o.CreatedAt, "created_at"
	case o.Created != nil:
		return *o.Created, "created"
	}
	return 0, "created_at"
}

// expectCreatedSeconds holds the created_at of a successful reply.
func (t *T) expectCreatedSeconds(ex *exchange) {
	if t.expectStatus(ex, http.StatusOK) {
		v, field := createdAt(ex.body)
		t.expectSeconds(ex, ex.req.op+" "+field, v)
	}
}

var timestampChecks = []Check{
	{ID: "chat.created-seconds", Area: AreaChat, Spec: specSeconds,
		run: func(t *T) {
			ex, _ := t.chat(t.chatBody("What time is it?"))
			t.expectCreatedSeconds(ex)
			ex, _ = t.stream(t.chatBody("What time is it?"))
			for i, ev := range streamData(ex.body) {
				v, _ := createdAt(ev)
				t.expectSeconds(ex, fmt.Sprintf("created of chunk %d", i+1), v)
			}
		}},
	{ID: "files.created-seconds", Area: AreaFiles, Spec: specSeconds,
		run: func(t *T) {
			id := t.upload("seconds.txt", "assistants", []byte("when"))
			t.expectCreatedSeconds(t.do(request{op: "files.retrieve", method: http.MethodGet, path: "/v1/files/" + id}))
		}},
	{ID: "threads.created-seconds", Area: AreaThreads, Spec: specSeconds,
		run: func(t *T) { t.expectCreatedSeconds(t.createThread(map[string]any{})) }},
	{ID: "batches.created-seconds", Area: AreaBatches, Spec: specSeconds,
		run: func(t *T) {
			t.expectCreatedSeconds(t.createBatch(t.batchInput(1), "/v1/chat/completions", "24h", nil))
		}},
	{ID: "vector_stores.created-seconds", Area: AreaVectorStores, Spec: specSeconds,
		run: func(t *T) {
			vs := t.newVectorStore()
			t.expectCreatedSeconds(t.do(request{op: "vector_stores.retrieve", method: http.MethodGet, path: "/v1/vector_stores/" + vs, beta: true}))
			id := t.upload("seconds.txt", "assistants", []byte("when"))
			t.expectCreatedSeconds(t.attach(vs, id, nil))
		}},
}
