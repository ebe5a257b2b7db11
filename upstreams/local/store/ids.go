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
