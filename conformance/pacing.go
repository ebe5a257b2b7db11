package conformance

import (
	"bytes"
	"fmt"
	"time"
)

// Pacing: a stream is delivered while the reply is made. A target that
// declares its pacing (Config.ExpectStreamInterval, e.g. the reference
// engine's stream_interval) and delivers every event in one burst holds
// the stream back: a buffering proxy, a compressing middleware, a
// gateway that reads the whole reply before answering.

const specPaced = "Events: with `stream` true the response data is delivered to the client as server-sent events while it is generated."

// eventArrivals returns when each event of a streamed exchange had fully
// arrived, in order.
func eventArrivals(ex *exchange) []time.Duration {
	var out []time.Duration
	r := 0
	for from := 0; ; {
		i := bytes.Index(ex.body[from:], []byte("\n\n"))
		if i < 0 {
			return out
		}
		end := from + i + 2
		for r < len(ex.reads) && ex.reads[r].end < end {
			r++
		}
		if r == len(ex.reads) {
			return out
		}
		out = append(out, ex.reads[r].at)
		from = end
	}
}

// minSpreadShare is the share of the declared spacing (events - 1 times
// the interval) the first-to-last spread must reach. A target pausing as
// declared spreads its events at least that far (pauses only grow); a
// client reading late can merge a few events, not most of them.
const minSpreadShare = 4

var pacingChecks = []Check{
	{ID: "chat.stream.paced", Area: AreaChat, Spec: specPaced,
		run: func(t *T) {
			interval := t.cfg.ExpectStreamInterval
			if interval <= 0 {
				t.skip("the target declares no pacing (--expect-stream-interval): a burst cannot be told from speed")
			}
			ex, _ := t.stream(t.chatBody("Write a long story about a city by a river.", "max_completion_tokens", 12))
			at := eventArrivals(ex)
			if len(at) < 5 {
				t.skip("a stream of %d events is too short to show pacing", len(at))
			}
			spread := at[len(at)-1] - at[0]
			want := time.Duration(len(at)-1) * interval / minSpreadShare
			t.expect(spread >= want, ex, fmt.Sprintf("%d events spread over at least %v (declared interval %v)", len(at), want, interval),
				"first event at %v, last at %v: spread %v (held back and delivered in one burst)", at[0], at[len(at)-1], spread)
		}},
}
