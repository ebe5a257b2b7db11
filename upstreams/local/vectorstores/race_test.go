//go:build race

package vectorstores

// raceEnabled: the race detector makes the 100,000-chunk differential
// test take some ten minutes; the 10,000-chunk one runs the same code
// under it.
const raceEnabled = true
