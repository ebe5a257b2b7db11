//go:build !race

package modelgate_test

// raceExtraRSS is nothing without the race detector (see race_test.go).
const raceExtraRSS = 0
