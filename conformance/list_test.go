package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/conformance"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestPagingWalkAndADeletedCursor: checks run side by side on one key,
// and one may delete the object another's paging walk holds as its
// `after` cursor. The gateway answers a cursor naming no object with an
// empty page, which ended the walk early and failed files.list.paging
// (its own files never listed) in CI. The walk starts again when its
// cursor object is gone; a target that ends a list early while the
// cursor object is still there still fails the check.
func TestPagingWalkAndADeletedCursor(t *testing.T) {
	base := testgateway.Quickstart(t, "")
	// Two files older than the check's own, so that an ascending walk's
	// first page (limit 2) is theirs and the second page's cursor is the
	// second of them.
	var cursor string
	others := func(t *testing.T) {
		upload(t, base, "other-a.txt")
		cursor = upload(t, base, "other-b.txt")
	}

	cases := []struct {
		name string
		// atCursor runs before the gateway answers the first page after
		// the cursor: it deletes the cursor object as another client
		// would, or answers the page itself (answered).
		atCursor func() (reply string, answered bool)
		fails    bool
	}{
		{"the cursor deleted by another client", func() (string, bool) {
			req, _ := http.NewRequest(http.MethodDelete, base+"/v1/files/"+cursor, nil)
			req.Header.Set("Authorization", "Bearer "+devKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("deleting the cursor file: %v %v", resp, err)
			}
			if resp != nil {
				resp.Body.Close()
			}
			return "", false
		}, false},
		{"a list ended early with its cursor still there", func() (string, bool) {
			return `{"object":"list","data":[],"first_id":null,"last_id":null,"has_more":false}`, true
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			others(t)
			var once sync.Once
			f := fault{intercept: func(_ *faultState, r *http.Request, _ []byte) (int, string, bool) {
				if r.Method != http.MethodGet || r.URL.Path != "/v1/files" || r.URL.Query().Get("after") != cursor {
					return 0, "", false
				}
				var reply string
				var answered bool
				once.Do(func() { reply, answered = c.atCursor() })
				return http.StatusOK, reply, answered
			}}
			report, err := conformance.Run(context.Background(), conformance.Config{BaseURL: brokenTarget(t, base, f), APIKey: devKey, Areas: filesArea, Only: []string{"files.list.paging"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(report.Results) != 1 {
				t.Fatalf("%d results, want files.list.paging's alone", len(report.Results))
			}
			res := report.Results[0]
			if failed := res.Status == conformance.Fail; failed != c.fails {
				t.Fatalf("files.list.paging: %s (want failed %v): %+v", res.Status, c.fails, res.Evidence)
			}
		})
	}
}

// upload stores a user_data file under devKey's owner, deleted when the
// test ends, and returns its ID.
func upload(t *testing.T, base, name string) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("purpose", "user_data")
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write([]byte("a file of another client"))
	mw.Close()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/files", &body)
	req.Header.Set("Authorization", "Bearer "+devKey)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var f struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&f); err != nil || resp.StatusCode != http.StatusOK || f.ID == "" {
		t.Fatalf("uploading %s: %d %v", name, resp.StatusCode, err)
	}
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, base+"/v1/files/"+f.ID, nil)
		req.Header.Set("Authorization", "Bearer "+devKey)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return f.ID
}
