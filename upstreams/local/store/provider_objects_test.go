package store

import (
	"context"
	"fmt"
	"testing"
)

// testProviderObjects: the owners of provider objects, recorded once
// (the first owner stays), read, listed among IDs, forgotten one by one
// and by age, a page at a time.
func testProviderObjects(t *testing.T, s Store) {
	ctx := context.Background()
	for i, id := range []string{"resp_a", "resp_b", "resp_c"} {
		if err := s.RecordProviderObject(ctx, "response", id, "alice", int64(100+i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordProviderObject(ctx, "response", "resp_a", "bob", 200); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordProviderObject(ctx, "file", "resp_a", "bob", 200); err != nil {
		t.Fatal(err)
	}
	if owner, err := s.ProviderObjectOwner(ctx, "response", "resp_a"); err != nil || owner != "alice" {
		t.Fatalf("owner of resp_a: %q %v, want alice (the first)", owner, err)
	}
	if owner, err := s.ProviderObjectOwner(ctx, "file", "resp_a"); err != nil || owner != "bob" {
		t.Fatalf("owner of file resp_a: %q %v, want bob", owner, err)
	}
	mustNotFound(t, "an unrecorded object", func() error { _, err := s.ProviderObjectOwner(ctx, "response", "resp_x"); return err }())
	owned, err := s.OwnedProviderObjects(ctx, "alice", "response", []string{"resp_x", "resp_c", "resp_a"})
	if err != nil || fmt.Sprint(owned) != "map[resp_a:true resp_c:true]" {
		t.Fatalf("owned: %v %v", owned, err)
	}
	if err := s.ForgetProviderObject(ctx, "response", "resp_c"); err != nil {
		t.Fatal(err)
	}
	mustNotFound(t, "a forgotten object", func() error { _, err := s.ProviderObjectOwner(ctx, "response", "resp_c"); return err }())
	// Rows before 102 are resp_a and resp_b; a page of one takes one.
	if n, err := s.ForgetProviderObjectsBefore(ctx, 102, 1); err != nil || n != 1 {
		t.Fatalf("forgot %d (%v), want 1", n, err)
	}
	if n, err := s.ForgetProviderObjectsBefore(ctx, 102, 10); err != nil || n != 1 {
		t.Fatalf("forgot %d (%v), want 1", n, err)
	}
	if owner, err := s.ProviderObjectOwner(ctx, "file", "resp_a"); err != nil || owner != "bob" {
		t.Fatalf("a newer row was forgotten: %q %v", owner, err)
	}
}
