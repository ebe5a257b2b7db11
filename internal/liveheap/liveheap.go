// Package liveheap reads the heap a process keeps, for tests that bound
// memory: what is left allocated once garbage is collected.
package liveheap

import "runtime"

// Bytes collects garbage (twice, so that objects freed by finalizers in
// the first cycle are gone too) and returns the bytes still allocated on
// the heap.
func Bytes() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
