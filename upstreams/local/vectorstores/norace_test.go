//go:build !race

package vectorstores

const raceEnabled = false
