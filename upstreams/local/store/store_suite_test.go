package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
	"testing/iotest"
)

// storeLocation is where a store under test keeps its data.
type storeLocation struct {
	// open opens the location anew, as another instance or a restart
	// would; the store is closed when the test ends.
	open func(t *testing.T) Store
	// contents counts the files whose contents the location keeps,
	// listed or not, as seen by a new reader.
	contents func(t *testing.T, s Store) int
}

// testStore runs every behaviour of FileStore and ThreadStore on loc; each
// subtest works for owners of its own.
func testStore(t *testing.T, loc storeLocation) {
	s := loc.open(t)
	t.Run("FilesInsertGetList", func(t *testing.T) { testFilesInsertGetList(t, s) })
	t.Run("OwnerIsolation", func(t *testing.T) { testOwnerIsolation(t, s) })
	t.Run("ContentRoundTrip", func(t *testing.T) { testContentRoundTrip(t, s) })
	t.Run("DeleteFile", func(t *testing.T) { testDeleteFile(t, loc, s) })
	t.Run("FileExpiry", func(t *testing.T) { testFileExpiry(t, loc, s) })
	t.Run("PartialUploadDiscarded", func(t *testing.T) { testPartialUploadDiscarded(t, loc, s) })
	t.Run("Threads", func(t *testing.T) { testThreads(t, s) })
	t.Run("Responses", func(t *testing.T) { testResponseStore(t, s) })
	t.Run("ResponseItemLookup", func(t *testing.T) { testResponseItemLookup(t, s) })
	t.Run("Conversations", func(t *testing.T) { testConversationStore(t, s) })
	t.Run("ProviderObjects", func(t *testing.T) { testProviderObjects(t, s) })
	t.Run("ItemStatements", func(t *testing.T) { testItemStatements(t, s) })
	t.Run("ResponseVisibility", func(t *testing.T) { testResponseVisibility(t, s) })
	t.Run("AbandonedResponses", func(t *testing.T) { testAbandonedResponses(t, s) })
	t.Run("ClientItemIDs", func(t *testing.T) { testClientItemIDs(t, s) })
	t.Run("ConversationAppendVisibility", func(t *testing.T) { testConversationAppendVisibility(t, s) })
	t.Run("ConcurrentConversationAppends", func(t *testing.T) { testConcurrentConversationAppends(t, s) })
	t.Run("AbandonedConversationAppends", func(t *testing.T) { testAbandonedConversationAppends(t, s) })
	t.Run("TwoInstances", func(t *testing.T) { testTwoInstances(t, s, loc.open(t)) })
}

// putFile stores content as a new file of owner, as an upload does.
func putFile(t *testing.T, s Store, owner, purpose string, content []byte) *File {
	t.Helper()
	f := &File{ID: NewID("file-"), Owner: owner, Filename: "f.jsonl", Purpose: purpose, CreatedAt: Now()}
	n, err := s.WriteFileContent(t.Context(), f.ID, bytes.NewReader(content))
	if err != nil || n != int64(len(content)) {
		t.Fatalf("writing content: %d bytes of %d, %v", n, len(content), err)
	}
	f.Bytes = n
	if err := s.InsertFile(t.Context(), f); err != nil {
		t.Fatalf("inserting file: %v", err)
	}
	return f
}

func fileIDs(files []File) []string {
	ids := make([]string, len(files))
	for i, f := range files {
		ids[i] = f.ID
	}
	return ids
}

// mustNotFound fails unless err is ErrNotFound.
func mustNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("%s: got %v, want ErrNotFound", what, err)
	}
}

func testFilesInsertGetList(t *testing.T, s Store) {
	ctx := t.Context()
	owner := NewID("owner-")
	var files []*File
	var ids, batchIDs []string
	for i := range 7 {
		purpose := "assistants"
		if i%3 == 0 {
			purpose = "batch"
		}
		f := putFile(t, s, owner, purpose, []byte(fmt.Sprintf(`{"n":%d}`, i)))
		if purpose == "batch" {
			batchIDs = append(batchIDs, f.ID)
		}
		files, ids = append(files, f), append(ids, f.ID)
	}
	expires := Now() + 3600
	withExpiry := &File{ID: NewID("file-"), Owner: owner, Filename: "e.txt", Purpose: "user_data", CreatedAt: Now(), ExpiresAt: &expires}
	if _, err := s.WriteFileContent(ctx, withExpiry.ID, bytes.NewReader(nil)); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertFile(ctx, withExpiry); err != nil {
		t.Fatal(err)
	}
	files, ids = append(files, withExpiry), append(ids, withExpiry.ID)

	for _, want := range files {
		got, err := s.GetFile(ctx, owner, want.ID)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("GetFile(%s) = %+v, %v; want %+v", want.ID, got, err, want)
		}
	}

	// Oldest first, pages of 3 chained by after.
	var seen []string
	var more []bool
	after := ""
	for range 4 {
		page, hasMore, err := s.ListFiles(ctx, owner, ListQuery{Limit: 3, After: after})
		if err != nil {
			t.Fatal(err)
		}
		seen, more = append(seen, fileIDs(page)...), append(more, hasMore)
		if !hasMore {
			break
		}
		after = page[len(page)-1].ID
	}
	if !reflect.DeepEqual(seen, ids) || !reflect.DeepEqual(more, []bool{true, true, false}) {
		t.Fatalf("ascending pages: %v (has_more %v), want %v (has_more true, true, false)", seen, more, ids)
	}

	reversed := make([]string, len(ids))
	for i, id := range ids {
		reversed[len(ids)-1-i] = id
	}
	cases := []struct {
		name     string
		q        ListQuery
		want     []string
		wantMore bool
	}{
		{"newest first, all", ListQuery{Limit: 8, Desc: true}, reversed, false},
		{"newest first, one short", ListQuery{Limit: 7, Desc: true}, reversed[:7], true},
		{"newest first after", ListQuery{Limit: 10, Desc: true, After: ids[3]}, []string{ids[2], ids[1], ids[0]}, false},
		{"purpose", ListQuery{Limit: 10, Purpose: "batch"}, batchIDs, false},
		{"purpose after", ListQuery{Limit: 1, Purpose: "batch", After: batchIDs[0]}, batchIDs[1:2], true},
		{"unknown cursor", ListQuery{Limit: 10, After: "file-unknown"}, nil, false},
		{"unknown purpose", ListQuery{Limit: 10, Purpose: "vision"}, nil, false},
	}
	for _, c := range cases {
		page, hasMore, err := s.ListFiles(ctx, owner, c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := fileIDs(page); fmt.Sprint(got) != fmt.Sprint(c.want) || hasMore != c.wantMore {
			t.Errorf("%s: %v has_more=%v, want %v has_more=%v", c.name, got, hasMore, c.want, c.wantMore)
		}
	}
}

func testOwnerIsolation(t *testing.T, s Store) {
	ctx := t.Context()
	alice, bob := NewID("alice-"), NewID("bob-")
	f := putFile(t, s, alice, "assistants", []byte("alice's"))
	th := &Thread{ID: NewID("thread_"), Owner: alice, CreatedAt: Now(), Metadata: json.RawMessage(`{}`), ToolResources: json.RawMessage(`{}`)}
	msg := ThreadMessage{ID: NewID("msg_"), Role: "user", Content: json.RawMessage(`[]`), Attachments: json.RawMessage(`[]`), Metadata: json.RawMessage(`{}`), CreatedAt: Now()}
	if err := s.CreateThread(ctx, th, []ThreadMessage{msg}); err != nil {
		t.Fatal(err)
	}

	_, err := s.GetFile(ctx, bob, f.ID)
	mustNotFound(t, "GetFile of another owner", err)
	_, err = s.OpenFile(ctx, bob, f.ID)
	mustNotFound(t, "OpenFile of another owner", err)
	mustNotFound(t, "DeleteFile of another owner", s.DeleteFile(ctx, bob, f.ID))
	if page, hasMore, err := s.ListFiles(ctx, bob, ListQuery{Limit: 10}); err != nil || len(page) != 0 || hasMore {
		t.Errorf("another owner lists %v (has_more %v, %v)", fileIDs(page), hasMore, err)
	}
	if page, _, err := s.ListFiles(ctx, bob, ListQuery{Limit: 10, After: f.ID, Desc: true}); err != nil || len(page) != 0 {
		t.Errorf("another owner's file as cursor lists %v, %v", fileIDs(page), err)
	}
	_, err = s.GetThread(ctx, bob, th.ID)
	mustNotFound(t, "GetThread of another owner", err)
	_, err = s.UpdateThread(ctx, bob, th.ID, json.RawMessage(`{"x":"y"}`), nil)
	mustNotFound(t, "UpdateThread of another owner", err)
	mustNotFound(t, "DeleteThread of another owner", s.DeleteThread(ctx, bob, th.ID))
	if msgs, err := s.ThreadMessages(ctx, bob, th.ID); err != nil || len(msgs) != 0 {
		t.Errorf("another owner reads %d messages, %v", len(msgs), err)
	}

	// Nothing bob tried touched alice's objects.
	if _, err := s.GetFile(ctx, alice, f.ID); err != nil {
		t.Errorf("alice's file after bob's attempts: %v", err)
	}
	if got, err := s.GetThread(ctx, alice, th.ID); err != nil || string(got.Metadata) != `{}` {
		t.Errorf("alice's thread after bob's attempts: %+v %v", got, err)
	}
}

func testContentRoundTrip(t *testing.T, s Store) {
	owner := NewID("owner-")
	for _, size := range []int{0, 1, 1000, 2*chunkSize + 12345} {
		content := make([]byte, size)
		rand.Read(content)
		f := putFile(t, s, owner, "assistants", content)
		rc, err := s.OpenFile(t.Context(), owner, f.ID)
		if err != nil {
			t.Fatalf("OpenFile of %d bytes: %v", size, err)
		}
		// Only Read: a file on disk would have ReadAt and Seek tested too, slowly.
		if err := iotest.TestReader(struct{ io.Reader }{rc}, content); err != nil {
			t.Errorf("content of %d bytes: %v", size, err)
		}
		if err := rc.Close(); err != nil {
			t.Errorf("closing content: %v", err)
		}
	}
}

func testDeleteFile(t *testing.T, loc storeLocation, s Store) {
	ctx := t.Context()
	owner := NewID("owner-")
	keep := putFile(t, s, owner, "assistants", []byte("keep"))
	f := putFile(t, s, owner, "assistants", bytes.Repeat([]byte("x"), chunkSize+1))
	before := loc.contents(t, s)
	if err := s.DeleteFile(ctx, owner, f.ID); err != nil {
		t.Fatalf("DeleteFile: %v", err)
	}
	_, err := s.GetFile(ctx, owner, f.ID)
	mustNotFound(t, "GetFile after delete", err)
	_, err = s.OpenFile(ctx, owner, f.ID)
	mustNotFound(t, "OpenFile after delete", err)
	mustNotFound(t, "second DeleteFile", s.DeleteFile(ctx, owner, f.ID))
	if page, _, err := s.ListFiles(ctx, owner, ListQuery{Limit: 10}); err != nil || !reflect.DeepEqual(fileIDs(page), []string{keep.ID}) {
		t.Errorf("listed after delete: %v %v", fileIDs(page), err)
	}
	if after := loc.contents(t, s); after != before-1 {
		t.Errorf("contents kept: %d before the delete, %d after; want one less", before, after)
	}
}

var errBroken = errors.New("connection cut")

func testPartialUploadDiscarded(t *testing.T, loc storeLocation, s Store) {
	ctx := t.Context()
	before := loc.contents(t, s)

	// Cut short: the reader fails after a chunk and a half.
	cut := NewID("file-")
	_, err := s.WriteFileContent(ctx, cut, io.MultiReader(bytes.NewReader(make([]byte, chunkSize*3/2)), iotest.ErrReader(errBroken)))
	if !errors.Is(err, errBroken) {
		t.Fatalf("WriteFileContent of a broken upload: %v, want the reader's error", err)
	}
	if err := s.DiscardFileContent(cut); err != nil {
		t.Errorf("DiscardFileContent after a failed write: %v", err)
	}
	// Refused after it was written (a bad form field, say).
	refused := NewID("file-")
	if _, err := s.WriteFileContent(ctx, refused, bytes.NewReader([]byte("refused"))); err != nil {
		t.Fatal(err)
	}
	if err := s.DiscardFileContent(refused); err != nil {
		t.Errorf("DiscardFileContent: %v", err)
	}
	// Abandoned: neither listed nor discarded, as a crash leaves it.
	abandoned := NewID("file-")
	if _, err := s.WriteFileContent(ctx, abandoned, bytes.NewReader([]byte("abandoned"))); err != nil {
		t.Fatal(err)
	}

	restarted := loc.open(t)
	for _, id := range []string{cut, refused, abandoned} {
		for _, st := range []Store{s, restarted} {
			_, err := st.GetFile(ctx, "anyone", id)
			mustNotFound(t, "GetFile of an unlisted upload", err)
		}
	}
	if after := loc.contents(t, restarted); after != before {
		t.Errorf("contents kept: %d before the unlisted uploads, %d after a restart", before, after)
	}
}

func testThreads(t *testing.T, s Store) {
	ctx := t.Context()
	owner := NewID("owner-")
	th := &Thread{ID: NewID("thread_"), Owner: owner, CreatedAt: Now(),
		Metadata: json.RawMessage(`{"topic":"tests"}`), ToolResources: json.RawMessage(`{"code_interpreter":{"file_ids":["file-a"]}}`)}
	msgs := []ThreadMessage{
		{ID: NewID("msg_"), Role: "user", Content: json.RawMessage(`[{"type":"text","text":{"value":"hi","annotations":[]}}]`),
			Attachments: json.RawMessage(`[{"file_id":"file-a","tools":[{"type":"file_search"}]}]`), Metadata: json.RawMessage(`{"n":"1"}`), CreatedAt: th.CreatedAt},
		{ID: NewID("msg_"), Role: "assistant", Content: json.RawMessage(`[{"type":"text","text":{"value":"hello","annotations":[]}}]`),
			Attachments: json.RawMessage(`[]`), Metadata: json.RawMessage(`{}`), CreatedAt: th.CreatedAt},
	}
	if err := s.CreateThread(ctx, th, msgs); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetThread(ctx, owner, th.ID); err != nil || !reflect.DeepEqual(got, th) {
		t.Fatalf("GetThread = %+v, %v; want %+v", got, err, th)
	}
	if got, err := s.ThreadMessages(ctx, owner, th.ID); err != nil || !reflect.DeepEqual(got, msgs) {
		t.Fatalf("ThreadMessages = %+v, %v; want %+v", got, err, msgs)
	}

	got, err := s.UpdateThread(ctx, owner, th.ID, json.RawMessage(`{"topic":"changed"}`), nil)
	if err != nil || string(got.Metadata) != `{"topic":"changed"}` || string(got.ToolResources) != string(th.ToolResources) {
		t.Fatalf("updating metadata: %+v %v", got, err)
	}
	got, err = s.UpdateThread(ctx, owner, th.ID, nil, json.RawMessage(`{}`))
	if err != nil || string(got.Metadata) != `{"topic":"changed"}` || string(got.ToolResources) != `{}` {
		t.Fatalf("updating tool_resources: %+v %v", got, err)
	}

	if err := s.DeleteThread(ctx, owner, th.ID); err != nil {
		t.Fatalf("DeleteThread: %v", err)
	}
	_, err = s.GetThread(ctx, owner, th.ID)
	mustNotFound(t, "GetThread after delete", err)
	_, err = s.UpdateThread(ctx, owner, th.ID, json.RawMessage(`{}`), nil)
	mustNotFound(t, "UpdateThread after delete", err)
	mustNotFound(t, "second DeleteThread", s.DeleteThread(ctx, owner, th.ID))
	// The messages went with the thread: a thread of the same ID has none.
	if err := s.CreateThread(ctx, th, nil); err != nil {
		t.Fatalf("recreating the thread: %v", err)
	}
	if got, err := s.ThreadMessages(ctx, owner, th.ID); err != nil || len(got) != 0 {
		t.Errorf("a deleted thread's messages survived: %+v %v", got, err)
	}
}

// testTwoInstances works through two stores open on one location.
func testTwoInstances(t *testing.T, a, b Store) {
	ctx := context.Background()
	owner := NewID("owner-")
	content := []byte("shared between instances")
	f := putFile(t, a, owner, "assistants", content)
	page, _, err := b.ListFiles(ctx, owner, ListQuery{Limit: 10})
	if err != nil || !reflect.DeepEqual(fileIDs(page), []string{f.ID}) {
		t.Fatalf("the other instance lists %v, %v", fileIDs(page), err)
	}
	rc, err := b.OpenFile(ctx, owner, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("the other instance reads %q, %v", got, err)
	}
	if err := b.DeleteFile(ctx, owner, f.ID); err != nil {
		t.Fatal(err)
	}
	_, err = a.GetFile(ctx, owner, f.ID)
	mustNotFound(t, "GetFile of a file the other instance deleted", err)

	th := &Thread{ID: NewID("thread_"), Owner: owner, CreatedAt: Now(), Metadata: json.RawMessage(`{}`), ToolResources: json.RawMessage(`{}`)}
	if err := b.CreateThread(ctx, th, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := a.GetThread(ctx, owner, th.ID); err != nil || got.ID != th.ID {
		t.Fatalf("the other instance's thread: %+v %v", got, err)
	}
}
