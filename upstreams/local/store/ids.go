package store

import (
	"crypto/rand"
	"crypto/sha256"
	"time"
)

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// NewID returns prefix followed by 24 random alphanumerics, the public
// shape of object IDs (file-..., thread_..., msg_...).
func NewID(prefix string) string {
	var raw [24]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("local: no randomness: " + err.Error()) // crypto/rand never fails on Linux
	}
	b := make([]byte, len(prefix)+len(raw))
	copy(b, prefix)
	for i, v := range raw {
		b[len(prefix)+i] = idAlphabet[int(v)%len(idAlphabet)]
	}
	return string(b)
}

// now is the clock objects are stamped with; tests may replace it.
var Now = func() int64 { return time.Now().Unix() }

// DerivedID is an object ID computed from a seed: the same seed always
// gives the same ID.
func DerivedID(prefix, seed string) string {
	sum := sha256.Sum256([]byte(seed))
	b := []byte(prefix)
	for _, v := range sum[:24] {
		b = append(b, idAlphabet[int(v)%len(idAlphabet)])
	}
	return string(b)
}

// idDigits are the digits of IDSequence's counter, in byte order.
const idDigits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// IDSequence makes the IDs of one request's items, each of NewID's shape:
// 16 random alphanumerics shared by them all, then a counter of 8 digits
// that sorts as it counts. A request's items then take one place of an
// index on their IDs, each after the one before, where random IDs would
// each land anywhere in it (199,000 of them: a page of the index read and
// written for each, several times the CPU of their bytes).
type IDSequence struct {
	stem string
	n    uint64
}

// NewIDSequence starts a sequence.
func NewIDSequence() *IDSequence { return &IDSequence{stem: NewID("")[:16]} }

// Next returns prefix followed by the next ID of the sequence.
func (s *IDSequence) Next(prefix string) string {
	var count [8]byte
	for i, n := len(count)-1, s.n; i >= 0; i, n = i-1, n/uint64(len(idDigits)) {
		count[i] = idDigits[n%uint64(len(idDigits))]
	}
	s.n++
	return prefix + s.stem + string(count[:])
}
