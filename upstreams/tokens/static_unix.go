//go:build unix

package tokens

import (
	"syscall"
	"unsafe"
)

// staticBytes returns n zeroed bytes outside the collected heap, for a
// vocabulary's arrays, which live as long as the process. On the heap they
// would count towards the collector's goal, which at GOGC=100 is twice the
// live heap: o200k_base's 4 MiB of arrays kept up to 8 MiB more of heap
// resident under load. Mapped here, they are resident once, and the
// collector neither scans them (it would not: they hold no pointer) nor
// counts them. Should the mapping fail, they go on the heap.
func staticBytes(n int) []byte {
	if n == 0 {
		return nil
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n)
	}
	return b
}

// staticUint32s is staticBytes for n uint32s (a mapping starts on a page,
// so it is aligned for them).
func staticUint32s(n int) []uint32 {
	b := staticBytes(4 * n)
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
