// Package atrest holds the test that bounds what a gateway keeps on the
// heap at rest: a real Caddy serving modelgate with every feature on,
// after it has served requests, against the heap before it was loaded.
package atrest
