package responses

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/schemas"
)

// responsesOverProvider serves responses.* on the local upstream, its
// chat completions on the provider.
func responsesOverProvider(t *testing.T, providerURL string) string {
	return testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s {
			name tester
		}
		upstream provider {
			base_url %s/v1
			api_key %s
		}
		upstream local local {
			data_dir %s
		}
		route chat.completions.create to provider
		route responses.* to local
	}`, gatewaytest.ClientKey, providerURL, gatewaytest.UpstreamKey, t.TempDir()))
}

// streamEvent is one event of a Responses stream.
type streamEvent struct {
	Name     string
	Type     string          `json:"type"`
	Seq      int             `json:"sequence_number"`
	Delta    string          `json:"delta"`
	Code     string          `json:"code"`
	Item     json.RawMessage `json:"item"`
	Response json.RawMessage `json:"response"`
}

// responseStream posts a streamed response request; its events are read
// one by one with next, the bytes read kept in raw.
type responseStream struct {
	t   *testing.T
	br  *bufio.Reader
	raw bytes.Buffer
}

func openResponseStream(t *testing.T, base, body string) *responseStream {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/responses", strings.NewReader(body))
	for k, v := range gatewaytest.ChatHeaders {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	s := &responseStream{t: t}
	s.br = bufio.NewReader(io.TeeReader(resp.Body, &s.raw))
	return s
}

// next is the stream's next event; false at its end.
func (s *responseStream) next() (streamEvent, bool) {
	s.t.Helper()
	var ev streamEvent
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			if line != "" || ev.Type != "" {
				s.t.Fatalf("the stream ends inside an event: %q", line)
			}
			return ev, false
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && ev.Type != "":
			return ev, true
		case strings.HasPrefix(line, "event: "):
			ev.Name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[len("data: "):]), &ev); err != nil {
				s.t.Fatalf("event data %s: %v", line, err)
			}
		}
	}
}

// rest reads the stream to its end and checks all of it against the
// Responses event grammar; sequence numbers count from 0 without a gap.
func (s *responseStream) rest(before []streamEvent) []streamEvent {
	s.t.Helper()
	all := before
	for ev, ok := s.next(); ok; ev, ok = s.next() {
		all = append(all, ev)
	}
	for i, ev := range all {
		if ev.Seq != i {
			s.t.Fatalf("event %d (%s) has sequence_number %d", i, ev.Type, ev.Seq)
		}
	}
	checker := schemas.NewResponsesStreamChecker()
	checker.Write(s.raw.Bytes())
	if findings := checker.Close(); len(findings) > 0 {
		s.t.Fatalf("the stream breaks the event grammar: %v\n%s", findings, s.raw.String())
	}
	return all
}

func eventTypes(events []streamEvent) string {
	var b strings.Builder
	for _, ev := range events {
		b.WriteString(ev.Type)
		if ev.Delta != "" {
			fmt.Fprintf(&b, "(%s)", ev.Delta)
		}
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

// storedResponse is GET /v1/responses/{id}, its status and body.
func storedResponse(t *testing.T, base, id string) (int, []byte) {
	t.Helper()
	resp, _ := gatewaytest.RawRequest(t, http.MethodGet, base+"/v1/responses/"+id, "", gatewaytest.ChatHeaders)
	return resp.StatusCode, gatewaytest.LastBody
}

// sameResponse: two responses are the same but for their ids and times.
func sameResponse(t *testing.T, a, b []byte) {
	t.Helper()
	norm := func(raw []byte) string {
		var r map[string]any
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		for _, k := range []string{"id", "created_at", "completed_at"} {
			if r[k] == nil {
				t.Fatalf("%s is missing: %s", k, raw)
			}
			delete(r, k)
		}
		for _, it := range r["output"].([]any) {
			delete(it.(map[string]any), "id")
		}
		out, _ := json.Marshal(r)
		return string(out)
	}
	if na, nb := norm(a), norm(b); na != nb {
		t.Fatalf("responses differ:\n%s\n%s", na, nb)
	}
}

// nonStreamed makes the response of body not streamed and returns it as
// stored.
func nonStreamed(t *testing.T, base, body string) []byte {
	t.Helper()
	resp, _ := gatewaytest.RawRequest(t, http.MethodPost, base+"/v1/responses", body, gatewaytest.ChatHeaders)
	var r struct{ ID string }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(gatewaytest.LastBody, &r) != nil {
		t.Fatalf("%d %s", resp.StatusCode, gatewaytest.LastBody)
	}
	status, stored := storedResponse(t, base, r.ID)
	if status != http.StatusOK {
		t.Fatalf("not stored: %d %s", status, stored)
	}
	return stored
}

// jsonEqual: a and b are the same JSON, spacing aside.
func jsonEqual(a, b []byte) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && ca.String() == cb.String()
}
