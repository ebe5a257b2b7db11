package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
)

// The induced-failure family: failures a client can cause on purpose,
// and the shapes the contract promises for them.

const (
	specErrorFile     = "error_file_id: the file holding outputs of requests that had errors. (Public API: each line has the request's `custom_id` and either `response` with the failing `status_code` and the error envelope as `body`, or `error` with `code` and `message`; the batch itself completes.)"
	specDeletedParent = "A deleted object takes what it contains with it: what was reached through it answers 404 in the error envelope."
)

var inducedFailureChecks = []Check{
	{ID: "invariant.induced-failure.batches.error-file", Area: AreaBatches, Requires: []string{AreaFiles}, Spec: specErrorFile,
		run: func(t *T) {
			m := t.mixedBatch()
			last, output, errs := m.last, m.output, m.errors
			_, inOutput := output["too-wide"]
			t.expect(!inOutput, last, "the refused line absent from the output file", "it is there")
			line, ok := errs["too-wide"]
			if !t.expect(ok && len(errs) == 1, last, "exactly one error line, for too-wide", "%d lines: %v", len(errs), errs) {
				return
			}
			switch {
			case line.Response != nil:
				var env struct {
					Error *apiError `json:"error"`
				}
				ok := line.Response.StatusCode >= 400 && line.Response.StatusCode < 500 && json.Unmarshal(line.Response.Body, &env) == nil && env.Error != nil && env.Error.Message != ""
				t.expect(ok, last, "response.status_code 4xx and response.body the error envelope", "%s", excerpt(line.raw))
				if ok && env.Error.Param != nil {
					t.expect(namesField(*env.Error.Param, "dimensions"), last, "param naming dimensions", "%s", *env.Error.Param)
				}
			case line.Error != nil:
				t.expect(line.Error.Code != "" && line.Error.Message != "", last, "error.code and error.message", "%s", excerpt(line.raw))
			default:
				t.fail(last.evidence("either response (the failing reply) or error on the error line", excerpt(line.raw)))
			}
		}},
	{ID: "invariant.induced-failure.vector_stores.deleted-parent", Area: AreaVectorStores, Requires: []string{AreaFiles}, Spec: specDeletedParent + " Here: a vector store's files after the store is deleted.",
		run: func(t *T) {
			vs := t.newVectorStore()
			file := t.upload("parent.txt", "assistants", []byte("A file in a store about to go."))
			t.requireStatus(t.attach(vs, file, nil), http.StatusOK)
			t.requireStatus(t.do(request{op: "vector_stores.delete", method: http.MethodDelete, path: "/v1/vector_stores/" + vs, beta: true}), http.StatusOK)
			t.expectGone(t.vectorStoreFile(vs, file), "a file of a deleted vector store")
			t.expectGone(t.listAttached(vs, url.Values{}), "the files list of a deleted vector store")
			t.expectGone(t.attach(vs, file, nil), "attaching to a deleted vector store")
			ex := t.get("files.retrieve", "/v1/files/"+file, false)
			t.expect(ex.status == http.StatusOK, ex, "the file itself still there (deleting a store detaches, never deletes, files)", "%s", ex.seenStatus())
		}},
	{ID: "invariant.induced-failure.conversations.deleted-parent", Area: AreaConversations, Spec: specDeletedParent + " Here: a conversation's items after the conversation is deleted.",
		run: func(t *T) {
			_, c := t.conversation(map[string]any{"items": userItems("first")})
			path := conversationsPath + "/" + c.ID
			t.requireStatus(t.do(request{op: "conversations.delete", method: http.MethodDelete, path: path}), http.StatusOK)
			t.expectGone(t.get(conversationItemsListOp, path+"/items", false), "the items of a deleted conversation")
			t.expectGone(t.do(request{op: "conversations.items.create", method: http.MethodPost, path: path + "/items", json: map[string]any{"items": userItems("late")}}), "adding items to a deleted conversation")
		}},
	{ID: "invariant.induced-failure.responses.deleted-parent", Area: AreaResponses, Spec: specDeletedParent + " Here: a response's input items, and previous_response_id naming a deleted response.",
		run: func(t *T) {
			_, r := t.response(t.responseBody("Remember the word river."))
			t.requireStatus(t.do(request{op: "responses.delete", method: http.MethodDelete, path: responsesPath + "/" + r.ID}), http.StatusOK)
			t.expectGone(t.get("responses.input_items.list", responsesPath+"/"+r.ID+"/input_items", false), "the input items of a deleted response")
			ex := t.do(request{op: responsesCreate, method: http.MethodPost, path: responsesPath, json: t.responseBody("Which word?", "previous_response_id", r.ID)})
			t.expect(ex.status == http.StatusNotFound || ex.status == http.StatusBadRequest, ex, fmt.Sprintf("404 (or 400) for previous_response_id %s, deleted", r.ID), "%s", ex.seenStatus())
		}},
}
