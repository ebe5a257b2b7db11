package conformance_test

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/conformance"
	"github.com/modelgate/modelgate/internal/testgateway"
)

var conversationAreas = []string{conformance.AreaConversations, conformance.AreaResponses}

// createdAtSeconds is a conversation's created_at.
var createdAtSeconds = regexp.MustCompile(`"created_at":(\d+)`)

// conversationFaults break one promise each of the Conversations
// interface; exactly the checks that enforce it must fail.
var conversationFaults = []fault{
	{name: "conforming proxy", areas: conversationAreas},
	// Every check reading a created conversation: the contract's unixtime
	// format holds each reply, besides conversations.lifecycle's own check.
	{name: "created_at in milliseconds", areas: conversationAreas, want: []string{
		"generated.conversations.create.valid", "generated.conversations.update.valid", "generated.conversations.update.invalid",
		"generated.conversations.items.list.valid", "generated.conversations.items.list.invalid",
		"conversations.lifecycle", "conversations.items", "conversations.responses", "conversations.isolation",
		"invariant.echo.conversations.create.metadata", "invariant.round-trip.conversations", "invariant.aggregate.conversations.items.list.page", "invariant.induced-failure.conversations.deleted-parent"},
		mutate: func(_ *faultState, r *http.Request, _ []byte, _ int, reply []byte) []byte {
			if r.Method == http.MethodPost && r.URL.Path == "/v1/conversations" {
				return createdAtSeconds.ReplaceAll(reply, []byte(`"created_at":${1}000`))
			}
			return reply
		}},
	{name: "items never has_more", areas: conversationAreas, want: []string{"conversations.items", "invariant.aggregate.conversations.items.list.page"},
		mutate: func(_ *faultState, r *http.Request, _ []byte, _ int, reply []byte) []byte {
			if strings.HasSuffix(r.URL.Path, "/items") {
				return bytes.ReplaceAll(reply, []byte(`"has_more":true`), []byte(`"has_more":false`))
			}
			return reply
		}},
	{name: "responses leave the conversation out", areas: conversationAreas, want: []string{"conversations.responses"},
		rewrite: func(r *http.Request, body []byte) []byte {
			if r.URL.Path == "/v1/responses" {
				return bytes.Replace(body, []byte(`"conversation":`), []byte(`"conversation_":`), 1)
			}
			return body
		}},
	{name: "another owner's conversation shown", areas: conversationAreas, want: []string{"conversations.isolation"},
		intercept: func(_ *faultState, r *http.Request, _ []byte) (int, string, bool) {
			if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/conversations/") && strings.Count(r.URL.Path, "/") == 3 &&
				r.Header.Get("Authorization") == "Bearer "+secondKey {
				return http.StatusOK, `{"id":"conv_x","object":"conversation","created_at":1741900000,"metadata":{}}`, true
			}
			return 0, "", false
		}},
}

// TestConversationsArea runs the conversations checks (with the responses
// area they need) against the quick start (they pass) and through each
// fault (exactly the checks it breaks fail): 32 checks, 14 of them the
// invariant families' of the two areas.
func TestConversationsArea(t *testing.T) {
	expectFaults(t, testgateway.Quickstart(t, secondOwner), conversationFaults, 32)
}

// expectFaults runs each fault's areas through it against base: the run
// has checks results, none skipped, and exactly the fault's checks fail.
func expectFaults(t *testing.T, base string, faults []fault, checks int) {
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			report, err := conformance.Run(context.Background(), conformance.Config{BaseURL: brokenTarget(t, base, f), APIKey: devKey, SecondAPIKey: secondKey, Areas: f.areas})
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, res := range report.Results {
				switch res.Status {
				case conformance.Fail:
					failed = append(failed, res.ID)
				case conformance.Skip:
					t.Errorf("%s skipped: %s", res.ID, res.Reason)
				}
			}
			if len(report.Results) != checks || !slices.Equal(failed, f.want) {
				var text strings.Builder
				report.WriteText(&text)
				t.Fatalf("failed %v, want %v of %d checks:\n%s", failed, f.want, checks, text.String())
			}
		})
	}
}
