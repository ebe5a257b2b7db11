//go:build !race

package gatewaytest

// RaceExtraRSS is nothing without the race detector (see race.go).
const RaceExtraRSS = 0

// RaceSlowdown is 1 without the race detector (see race.go).
const RaceSlowdown = 1
