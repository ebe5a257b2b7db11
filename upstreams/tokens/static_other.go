//go:build !unix

package tokens

// staticBytes returns n zeroed bytes for a vocabulary's arrays; where there
// is no mmap, on the heap (see static_unix.go).
func staticBytes(n int) []byte { return make([]byte, n) }

// staticUint32s is staticBytes for n uint32s.
func staticUint32s(n int) []uint32 { return make([]uint32, n) }
