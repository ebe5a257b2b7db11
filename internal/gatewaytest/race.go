//go:build race

package gatewaytest

// RaceExtraRSS is what the race detector's shadow memory adds to a
// gateway process's peak under the hostile attacks: the largest of them
// (60 MiB of JSON numbers, decoded before it is refused) peaked at 751 to
// 1,122 MiB in runs of one build under -race, against a live set far
// smaller without it; four Responses of 199,000 items at once peaked at
// +542 MiB over the idle gateway under -race, +192 to +221 MiB without.
const RaceExtraRSS = 512 << 20

// RaceSlowdown is how much slower the race detector makes the gateway:
// attacks whose bounds it would break skip under it.
const RaceSlowdown = 5
