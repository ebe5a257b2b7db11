//go:build !race

package providertest

// raceShadow is 1 without the race detector (see race.go).
const raceShadow = 1
