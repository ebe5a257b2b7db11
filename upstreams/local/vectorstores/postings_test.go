package vectorstores

import (
	"math/rand/v2"
	"testing"
)

// TestPostingsSeek: packed postings give back every chunk and count
// pushed, and a seek from anywhere lands on the first chunk not below
// its target, across skip runs.
func TestPostingsSeek(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 41))
	p := newPostings()
	var docs, counts []uint32
	for doc := uint32(r.IntN(3)); len(docs) < 1000; doc += 1 + uint32(r.IntN(300)) {
		count := uint32(1)
		if r.IntN(4) == 0 {
			count = 1 + uint32(r.IntN(100_000))
		}
		p.push(doc, count)
		docs, counts = append(docs, doc), append(counts, count)
	}
	i := 0
	for c := newCursor(p); !c.done(); c.next() {
		if c.at != int64(docs[i]) || c.tf != counts[i] {
			t.Fatalf("posting %d: %d x%d, pushed %d x%d", i, c.at, c.tf, docs[i], counts[i])
		}
		i++
	}
	if i != len(docs) {
		t.Fatalf("%d postings read of %d", i, len(docs))
	}
	for range 2000 {
		c := newCursor(p)
		for range 1 + r.IntN(3) {
			target := int64(r.IntN(int(docs[len(docs)-1]) + 10))
			from := c.at
			c.seek(target)
			want := max(target, from)
			j := 0
			for j < len(docs) && int64(docs[j]) < want {
				j++
			}
			if j == len(docs) {
				if !c.done() {
					t.Fatalf("seek %d from %d: at %d, want the end", target, from, c.at)
				}
				break
			}
			if c.done() || c.at != int64(docs[j]) || c.tf != counts[j] || c.i != j {
				t.Fatalf("seek %d from %d: at %d (#%d), want %d (#%d)", target, from, c.at, c.i, docs[j], j)
			}
		}
	}
}
