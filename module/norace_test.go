//go:build !race

package modelgate_test

// raceExtraRSS is nothing without the race detector (see race_test.go).
const raceExtraRSS = 0

// raceSlowdown is 1 without the race detector (see race_test.go).
const raceSlowdown = 1
