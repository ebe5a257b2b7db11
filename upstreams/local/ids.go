package local

import (
	"crypto/rand"
	"strconv"
	"time"
)

// itoa formats an index for error params.
func itoa(i int) string { return strconv.Itoa(i) }

const idAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// newID returns prefix followed by 24 random alphanumerics, the public
// shape of object IDs (file-..., thread_..., msg_...).
func newID(prefix string) string {
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
var now = func() int64 { return time.Now().Unix() }
