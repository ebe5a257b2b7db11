package providertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// Mode is a way a provider turns hostile: every request gets a 200 whose
// body never ends on its own.
type Mode string

// The modes. Each is bounded on the fake's side too, so that a gateway
// that does not bound it fails the test instead of hanging it: the fake
// stops after hostileBytes bytes or hostileDrips drips.
const (
	// EndlessEvent: a stream whose first event never ends (for SSE, no
	// blank line ever comes): Provider.EventStart, then filler bytes.
	EndlessEvent Mode = "endless event"
	// FloodComments: a stream of Provider.Drip, as fast as it is read.
	FloodComments Mode = "stream flooding comments"
	// DripComments: a stream of Provider.Drip, one every few milliseconds.
	DripComments Mode = "stream dripping comments"
	// EndlessJSON: a JSON reply that never ends.
	EndlessJSON Mode = "endless JSON reply"
	// DripJSON: a JSON reply of which one space comes every few
	// milliseconds.
	DripJSON Mode = "dripping JSON reply"
)

const (
	hostileBytes = 256 << 20
	hostileDrips = 2000
	dripEvery    = 5 * time.Millisecond
)

// Hostile is a fake provider answering every request in one mode.
type Hostile struct {
	*httptest.Server
	P    Provider
	Mode Mode
}

// NewHostile starts a fake of p's wire format that answers in mode.
func NewHostile(t *testing.T, p Provider, mode Mode) *Hostile {
	h := &Hostile{P: p, Mode: mode}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Close)
	return h
}

func (h *Hostile) serve(w http.ResponseWriter, r *http.Request) {
	streamType, eventStart, drip := h.P.streamShape()
	var start, unit []byte
	delay, n := time.Duration(0), hostileBytes
	switch h.Mode {
	case EndlessEvent:
		w.Header().Set("Content-Type", streamType)
		start, unit = eventStart, bytes.Repeat([]byte("a"), 32<<10)
	case FloodComments:
		w.Header().Set("Content-Type", streamType)
		start, unit = h.P.DripStart, bytes.Repeat(drip, (32<<10)/len(drip))
	case DripComments:
		w.Header().Set("Content-Type", streamType)
		start, unit = h.P.DripStart, drip
		delay, n = dripEvery, hostileDrips*len(drip)
	case EndlessJSON, DripJSON:
		w.Header().Set("Content-Type", "application/json")
		start, unit = []byte(`{"id":"`), bytes.Repeat([]byte("a"), 32<<10)
		if h.Mode == DripJSON {
			unit, delay, n = []byte(" "), dripEvery, hostileDrips
		}
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	w.Write(start)
	for sent := 0; sent < n; sent += len(unit) {
		if _, err := w.Write(unit); err != nil || rc.Flush() != nil {
			return // the gateway hung up
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
	}
}

// streamShape is how p streams: its content type, the start of an event
// (EventStart) and a unit that is no event (Drip), SSE's by default.
func (p Provider) streamShape() (streamType string, eventStart, drip []byte) {
	streamType, eventStart, drip = p.StreamType, p.EventStart, p.Drip
	if streamType == "" {
		streamType = "text/event-stream"
	}
	if eventStart == nil {
		eventStart = []byte(`data: {"text":"`)
	}
	if drip == nil {
		drip = []byte(": keep-alive\n\n")
	}
	return streamType, eventStart, drip
}

// The bounds RunHostile configures, and what the gateway's memory may grow
// by while it serves one hostile reply: 64 MiB (three times that under
// the race detector), below the hostileBytes (256 MiB) the fake sends, all
// of which a gateway without the bounds holds.
const (
	HostileBuffer   = 1 << 20
	HostileSize     = 8 << 20
	HostileDuration = 200 * time.Millisecond
	MaxHostileRSS   = 64 << 20 * raceShadow
)

// RunHostile runs every hostile mode against p through a real gateway
// (its upstream given tiny bounds, and max_body_size, the bound of one
// event of a stream relayed as it is, that of max_reply_buffer) as
// subtests: each request gets the
// error the bound answers in the envelope (a 502 or 504, or an error event
// ending the stream), and the process's peak RSS grows by less than
// MaxHostileRSS while it is served.
func RunHostile(t *testing.T, p Provider) {
	type scenario struct {
		mode         Mode
		op           string
		stream       bool
		status       int
		code, bounds string
	}
	sized := fmt.Sprintf("max_reply_buffer %d\n\t\t\tmax_reply_size %d", HostileBuffer, HostileSize)
	timed := "max_reply_duration " + HostileDuration.String()
	scenarios := []scenario{
		{mode: EndlessEvent, op: "chat", stream: true, code: "upstream_event_too_large", bounds: sized},
		{mode: FloodComments, op: "chat", stream: true, code: "upstream_reply_too_large", bounds: sized},
		{mode: DripComments, op: "chat", stream: true, code: "upstream_reply_timeout", bounds: timed},
		{mode: EndlessJSON, op: "chat", status: http.StatusBadGateway, code: "upstream_reply_too_large", bounds: sized},
		{mode: DripJSON, op: "chat", status: http.StatusGatewayTimeout, code: "upstream_reply_timeout", bounds: timed},
	}
	if p.Embeddings {
		scenarios = append(scenarios,
			scenario{mode: EndlessJSON, op: "embeddings", status: http.StatusBadGateway, code: "upstream_reply_too_large", bounds: sized},
			scenario{mode: DripJSON, op: "embeddings", status: http.StatusGatewayTimeout, code: "upstream_reply_timeout", bounds: timed})
	}
	for _, sc := range scenarios {
		name := fmt.Sprintf("%s, %s", sc.mode, sc.op)
		if sc.stream {
			name += " streamed"
		}
		t.Run(name, func(t *testing.T) {
			h := NewHostile(t, p, sc.mode)
			routes := "chat.completions.create"
			if p.Embeddings {
				routes += " embeddings.create"
			}
			base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		max_body_size %d
		response_check strict
		upstream hostile %s {
			%s
			%s
		}
		route %s to hostile
	}`, ClientKey, HostileBuffer, p.Kind, p.Block(h.URL, false), sc.bounds, routes))
			c := NewClient(base)
			var err error
			grew := PeakRSSGrowth(t, func() {
				ctx := context.Background()
				switch {
				case sc.op == "embeddings":
					_, err = c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: openai.EmbeddingModel(EmbeddingModel),
						Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"first"}}})
				case sc.stream:
					st := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: p.Model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")}})
					for st.Next() {
					}
					err = st.Err()
					st.Close()
				default:
					_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: p.Model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")}})
				}
			})
			t.Logf("peak RSS grew by %d KiB", grew>>10)
			if grew > MaxHostileRSS {
				t.Errorf("peak RSS grew by %d MiB, want under %d MiB", grew>>20, MaxHostileRSS>>20)
			}
			wantError(t, err, sc.status, sc.code)
		})
	}
}

// wantError: err is the SDK's error carrying code: an API error of status
// before a stream (status not 0), the error event raised within one.
func wantError(t *testing.T, err error, status int, code string) {
	t.Helper()
	if status == 0 {
		if err == nil || !strings.Contains(err.Error(), `"code":"`+code+`"`) {
			t.Fatalf("stream error %v, want an error event with code %s", err, code)
		}
		return
	}
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("error %v, want an API error with code %s", err, code)
	}
	if apiErr.Code != code || (status != 0 && apiErr.StatusCode != status) {
		t.Fatalf("error %d %q (%s), want %d %s", apiErr.StatusCode, apiErr.Code, apiErr.Message, status, code)
	}
}

// PeakRSSGrowth runs f and returns how much the process's peak resident
// memory (VmHWM, reset before f through /proc/self/clear_refs) passed its
// resident memory before f.
func PeakRSSGrowth(t *testing.T, f func()) int64 {
	t.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
	before := procStatus(t, "VmRSS")
	f()
	return procStatus(t, "VmHWM") - before
}

// procStatus reads a size field of /proc/self/status, in bytes.
func procStatus(t *testing.T, field string) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q", field, rest)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
