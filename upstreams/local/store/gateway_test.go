package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/internal/testpg"
)

func TestSQLiteGatewayStore(t *testing.T) {
	dir := t.TempDir()
	testGatewayStore(t, func(t *testing.T) GatewayStore { return openTestSQLite(t, dir) })
}

func TestPostgresGatewayStore(t *testing.T) {
	dsn := testpg.DSN(t)
	testGatewayStore(t, func(t *testing.T) GatewayStore { return openTestPostgres(t, dsn) })
}

// testGatewayStore: keys written by two instances at once are each read
// once by a reader following the versions (none is passed over while
// another write is in flight); a name is one key's per owner; spend adds
// up across instances and writes.
func testGatewayStore(t *testing.T, open func(t *testing.T) GatewayStore) {
	ctx := context.Background()
	one, two := open(t), open(t)
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	seen := map[string]int{}
	var version int64
	read := func() {
		keys, err := one.KeysSince(ctx, version, 7)
		if err != nil {
			t.Error(err)
			return
		}
		for _, k := range keys {
			seen[k.ID]++
			version = k.Version
		}
	}
	for w := range writers {
		s := []GatewayStore{one, two}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("key_%d_%d", w, i)
				errs <- s.CreateKey(ctx, &APIKey{ID: id, Digest: id, Name: id, Owner: "o", Config: []byte(`{}`), CreatedAt: 1})
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		read()
	}
	for range writers * each {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for before := -1; before != len(seen); {
		before = len(seen)
		read()
	}
	if len(seen) != writers*each {
		t.Fatalf("the reader saw %d keys of %d", len(seen), writers*each)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s read %d times", id, n)
		}
	}

	if err := two.CreateKey(ctx, &APIKey{ID: "key_dup", Digest: "dup", Name: "key_0_0", Owner: "o", Config: []byte(`{}`)}); !errors.Is(err, ErrNameTaken) {
		t.Errorf("a taken name: %v", err)
	}
	if _, err := one.UpdateKey(ctx, "key_0_1", func(k *APIKey) error { k.Name = "key_0_2"; return nil }); !errors.Is(err, ErrNameTaken) {
		t.Errorf("renamed to a taken name: %v", err)
	}
	if _, err := one.UpdateKey(ctx, "key_none", func(*APIKey) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown key: %v", err)
	}
	refusal := errors.New("refused")
	if _, err := one.UpdateKey(ctx, "key_0_1", func(k *APIKey) error { k.Name = "changed"; return refusal }); !errors.Is(err, refusal) {
		t.Errorf("a change refused: %v", err)
	}
	if k, err := two.GetKey(ctx, "key_0_1"); err != nil || k.Name != "key_0_1" {
		t.Errorf("after a refused change: %+v %v", k, err)
	}
	now := int64(5)
	k, err := two.UpdateKey(ctx, "key_0_1", func(k *APIKey) error { k.RevokedAt, k.Metadata = &now, []byte(`{"a":"b"}`); return nil })
	if err != nil || k.Version <= version {
		t.Fatalf("update: %+v %v", k, err)
	}
	if got, err := one.KeysSince(ctx, version, 10); err != nil || len(got) != 1 || got[0].RevokedAt == nil || *got[0].RevokedAt != 5 || string(got[0].Metadata) != `{"a":"b"}` {
		t.Errorf("the change read: %+v %v", got, err)
	}

	row := SpendRow{Hour: 3600, KeyName: "k", Owner: "o", Model: "m", Upstream: "u", Pico: 450, Requests: 1}
	other := row
	other.Hour, other.Pico, other.Unpriced, other.Requests = 7200, 0, 1, 0
	for _, s := range []GatewayStore{one, two, one} {
		if err := s.AddSpend(ctx, []SpendRow{row, other}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := two.Spend(ctx, 0, 7200); err != nil || len(got) != 1 || got[0].Pico != 1350 || got[0].Requests != 3 || got[0].Unpriced != 0 {
		t.Errorf("spend of the first hour: %+v %v", got, err)
	}
	if got, err := two.Spend(ctx, 0, 10800); err != nil || len(got) != 1 || got[0].Pico != 1350 || got[0].Unpriced != 3 {
		t.Errorf("spend of both hours: %+v %v", got, err)
	}
}
