package conformance

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
)

type file struct {
	ID       string `json:"id"`
	Object   string `json:"object"`
	Bytes    int64  `json:"bytes"`
	Filename string `json:"filename"`
	Purpose  string `json:"purpose"`
}

const specFiles = "Batches and vector stores use uploaded files (`input_file_id`: ID of an uploaded file, uploaded with purpose `batch`). (Public API: files are uploaded as multipart `file` + `purpose`, listed with `limit`, `order` and an `after` cursor, retrieved, read and deleted.)"

var fileChecks = []Check{
	{ID: "files.lifecycle", Area: AreaFiles, Spec: specFiles,
		run: func(t *T) {
			content := []byte("conformance file content\nline two\n")
			ex := t.uploadRaw("lifecycle.txt", "assistants", content)
			t.requireStatus(ex, http.StatusOK)
			var f file
			t.decode(ex, &f)
			t.cleanup(request{method: http.MethodDelete, path: "/v1/files/" + f.ID})
			want := file{ID: f.ID, Object: "file", Bytes: int64(len(content)), Filename: "lifecycle.txt", Purpose: "assistants"}
			t.expect(f == want && f.ID != "", ex, jsonText(want), "%s", jsonText(f))

			ex = t.do(request{op: "files.retrieve", method: http.MethodGet, path: "/v1/files/" + f.ID})
			if t.expectStatus(ex, http.StatusOK) {
				var got file
				t.decode(ex, &got)
				t.expect(got == want, ex, jsonText(want), "%s", jsonText(got))
			}
			ex = t.do(request{method: http.MethodGet, path: "/v1/files/" + f.ID + "/content"})
			if t.expectStatus(ex, http.StatusOK) {
				t.expect(bytes.Equal(ex.body, content), ex, "the uploaded bytes", "%d other bytes", len(ex.body))
			}
			ex = t.do(request{op: "files.delete", method: http.MethodDelete, path: "/v1/files/" + f.ID})
			if t.expectStatus(ex, http.StatusOK) {
				t.expectDeleted(ex, f.ID, "file")
			}
			for _, path := range []string{"/v1/files/" + f.ID, "/v1/files/" + f.ID + "/content"} {
				t.expectStatus(t.do(request{method: http.MethodGet, path: path}), http.StatusNotFound)
			}
			t.expectStatus(t.do(request{method: http.MethodDelete, path: "/v1/files/" + f.ID}), http.StatusNotFound)
		}},
	{ID: "files.list.paging", Area: AreaFiles, Spec: specFiles + " A list page has `object` list, `data`, `first_id`, `last_id` and `has_more`.",
		run: func(t *T) {
			var ids []string
			for i := range 5 {
				ids = append(ids, t.upload(fmt.Sprintf("page-%d.txt", i), "user_data", []byte(fmt.Sprintf("page file %d", i))))
			}
			for _, order := range []string{"asc", "desc"} {
				t.expectListed(t.pageAll("files.list", "/v1/files", url.Values{"limit": {"2"}, "order": {order}, "purpose": {"user_data"}}, false), ids)
			}
		}},
	{ID: "files.upload-rules", Area: AreaFiles, Spec: specFiles + " Both parts are required.",
		run: func(t *T) {
			t.expectParam(t.uploadRaw("no-purpose.txt", "", []byte("x")), "purpose")
			t.expectParam(t.uploadRaw("bad-purpose.txt", "conformance-no-such-purpose", []byte("x")), "purpose")
		}},
}
