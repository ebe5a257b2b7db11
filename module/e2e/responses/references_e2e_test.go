package responses

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testpg"
)

// TestOtherOwnersObjectsCannotBeNamed: every ID a request names (thread
// tool_resources and message attachments, vector store file_ids, a vector
// store file, a batch's input_file_id) must belong to the caller; bob
// naming alice's objects gets the answer a missing object gets, and
// nothing is created. On SQLite and on PostgreSQL.
func TestOtherOwnersObjectsCannotBeNamed(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			storeLine := "data_dir " + t.TempDir()
			if store == "postgres" {
				storeLine = fmt.Sprintf("postgres %q", testpg.VectorDSN(t))
			}
			testOtherOwnersObjects(t, gatewaytest.StartLocalOn(t, storeLine))
		})
	}
}

func testOtherOwnersObjects(t *testing.T, base string) {
	ctx := context.Background()
	alice, bob := gatewaytest.SDK(base), gatewaytest.SDK(base, option.WithAPIKey(gatewaytest.OtherKey))
	aliceFile := gatewaytest.Upload(t, alice, "notes.txt", []byte("alice's notes"))
	aliceBatchFile := gatewaytest.UploadBatchFile(t, alice, gatewaytest.BatchInput(1, "gpt-4o-mini"))
	bobFile := gatewaytest.Upload(t, bob, "mine.txt", []byte("bob's own notes"))
	aliceStore, err := alice.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("alice's")})
	if err != nil {
		t.Fatal(err)
	}
	bobStore, err := bob.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("bob's")})
	if err != nil {
		t.Fatal(err)
	}
	bobThread := newThread(t, base, gatewaytest.OtherKey, `{}`)

	beta := map[string]string{"Authorization": "Bearer " + gatewaytest.OtherKey, "Content-Type": "application/json", "OpenAI-Beta": "assistants=v2"}
	for _, tc := range []struct {
		name, method, path, body, param string
		status                          int
	}{
		{"thread vector_store_ids", "POST", "/v1/threads", fmt.Sprintf(`{"tool_resources":{"file_search":{"vector_store_ids":[%q]}}}`, aliceStore.ID), "tool_resources.file_search.vector_store_ids[0]", 404},
		{"thread code_interpreter file_ids", "POST", "/v1/threads", fmt.Sprintf(`{"tool_resources":{"code_interpreter":{"file_ids":[%q]}}}`, aliceFile), "tool_resources.code_interpreter.file_ids[0]", 404},
		{"thread vector_stores helper file_ids", "POST", "/v1/threads", fmt.Sprintf(`{"tool_resources":{"file_search":{"vector_stores":[{"file_ids":[%q]}]}}}`, aliceFile), "tool_resources.file_search.vector_stores[0].file_ids[0]", 404},
		{"thread message attachment", "POST", "/v1/threads", fmt.Sprintf(`{"messages":[{"role":"user","content":"hi","attachments":[{"file_id":%q,"tools":[{"type":"file_search"}]}]}]}`, aliceFile), "messages[0].attachments[0].file_id", 404},
		{"thread update vector_store_ids", "POST", "/v1/threads/" + bobThread, fmt.Sprintf(`{"tool_resources":{"file_search":{"vector_store_ids":[%q]}}}`, aliceStore.ID), "tool_resources.file_search.vector_store_ids[0]", 404},
		{"vector store file_ids", "POST", "/v1/vector_stores", fmt.Sprintf(`{"file_ids":[%q]}`, aliceFile), "file_ids[0]", 404},
		{"vector store file_ids, the second missing", "POST", "/v1/vector_stores", fmt.Sprintf(`{"file_ids":[%q,"file-missing"]}`, bobFile), "file_ids[1]", 404},
		{"vector store file", "POST", "/v1/vector_stores/" + bobStore.ID + "/files", fmt.Sprintf(`{"file_id":%q}`, aliceFile), "file_id", 404},
		{"batch input_file_id", "POST", "/v1/batches", fmt.Sprintf(`{"input_file_id":%q,"endpoint":"/v1/chat/completions","completion_window":"24h"}`, aliceBatchFile), "input_file_id", 400},
	} {
		resp, env := gatewaytest.RawRequest(t, tc.method, base+tc.path, tc.body, beta)
		param := ""
		if env.Error.Param != nil {
			param = *env.Error.Param
		}
		if resp.StatusCode != tc.status || env.Error.Type != "invalid_request_error" || param != tc.param {
			t.Errorf("%s: %d %+v (param %q), want %d naming %q", tc.name, resp.StatusCode, env.Error, param, tc.status, tc.param)
		}
	}
	// Nothing was created or changed for bob, and his own objects still work.
	if got, err := bob.VectorStores.List(ctx, openai.VectorStoreListParams{}); err != nil || len(got.Data) != 1 {
		t.Fatalf("bob's vector stores after the refusals: %v %v", got, err)
	}
	if got := newThread(t, base, gatewaytest.OtherKey, fmt.Sprintf(`{"tool_resources":{"file_search":{"vector_store_ids":[%q]}}}`, bobStore.ID)); got == "" {
		t.Fatal("bob's own vector store refused")
	}
}

// newThread creates a thread with key and returns its ID.
func newThread(t *testing.T, base, key, body string) string {
	t.Helper()
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/threads", body,
		map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json", "OpenAI-Beta": "assistants=v2"})
	if resp.StatusCode != 200 {
		t.Fatalf("creating a thread: %d %s", resp.StatusCode, gatewaytest.LastBody)
	}
	var th struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(gatewaytest.LastBody, &th); err != nil || th.ID == "" {
		t.Fatalf("thread %s: %v", gatewaytest.LastBody, err)
	}
	return th.ID
}
