//go:build race

package providertest

// raceShadow is how many times the race detector multiplies the memory a
// test process touches (its shadow memory), for bounds on peak RSS.
const raceShadow = 3
