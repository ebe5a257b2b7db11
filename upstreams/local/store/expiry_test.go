package store

import (
	"bytes"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
)

// testFileExpiry: a file is there until the second before its
// expires_at, gone for GetFile, OpenFile and ListFiles from it on, and
// listed by ExpiredFiles, whose DeleteFile removes its row and content;
// files without expiry, or expiring later, stay.
func testFileExpiry(t *testing.T, loc storeLocation, s Store) {
	var clock atomic.Int64
	clock.Store(1_800_000_000)
	saved := Now
	Now = clock.Load
	t.Cleanup(func() { Now = saved })
	ctx := t.Context()
	owner := NewID("owner-")
	put := func(expiresIn int64) *File {
		f := &File{ID: NewID("file-"), Owner: owner, Filename: "f.txt", Purpose: "assistants", CreatedAt: Now()}
		if expiresIn > 0 {
			at := Now() + expiresIn
			f.ExpiresAt = &at
		}
		n, err := s.WriteFileContent(ctx, f.ID, bytes.NewReader([]byte("content")))
		if err != nil {
			t.Fatal(err)
		}
		f.Bytes = n
		if err := s.InsertFile(ctx, f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	keep, soon, later := put(0), put(3600), put(7200)
	listed := func() []string {
		page, _, err := s.ListFiles(ctx, owner, ListQuery{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		return fileIDs(page)
	}
	clock.Add(3599)
	if _, err := s.GetFile(ctx, owner, soon.ID); err != nil {
		t.Fatalf("a second before expiry: %v", err)
	}
	if got := listed(); !reflect.DeepEqual(got, []string{keep.ID, soon.ID, later.ID}) {
		t.Fatalf("listed %v a second before expiry", got)
	}
	clock.Add(1)
	_, err := s.GetFile(ctx, owner, soon.ID)
	mustNotFound(t, "GetFile at expires_at", err)
	_, err = s.OpenFile(ctx, owner, soon.ID)
	mustNotFound(t, "OpenFile at expires_at", err)
	if got := listed(); !reflect.DeepEqual(got, []string{keep.ID, later.ID}) {
		t.Fatalf("listed %v at expires_at", got)
	}
	expired, err := s.ExpiredFiles(ctx, Now(), 1000)
	has := func(id string) bool { return slices.ContainsFunc(expired, func(f File) bool { return f.ID == id }) }
	if err != nil || !has(soon.ID) || has(later.ID) || has(keep.ID) {
		t.Fatalf("ExpiredFiles: %v %v", fileIDs(expired), err)
	}
	before := loc.contents(t, s)
	if err := s.DeleteFile(ctx, owner, soon.ID); err != nil {
		t.Fatalf("deleting the expired file: %v", err)
	}
	if after := loc.contents(t, s); after != before-1 {
		t.Errorf("contents: %d before deleting the expired file, %d after; want one less", before, after)
	}
	if expired, _ = s.ExpiredFiles(ctx, Now(), 1000); has(soon.ID) {
		t.Fatal("the expired file is still listed by ExpiredFiles after its delete")
	}
	if _, err := s.GetFile(ctx, owner, later.ID); err != nil {
		t.Fatalf("the file expiring later: %v", err)
	}
}
