package upstreams

import "unsafe"

// SumTokens adds token counts, as providers report them, saturating at
// the ends of T's range instead of wrapping: a provider reporting 9e18
// prompt and 9e18 completion tokens gets a total of the largest T, not a
// negative one.
func SumTokens[T int | int64](counts ...T) T {
	top := T(1)<<(8*unsafe.Sizeof(T(0))-1) - 1 // wraps to the largest T
	var sum T
	for _, n := range counts {
		switch {
		case n > 0 && sum > top-n:
			sum = top
		case n < 0 && sum < -top-1-n:
			sum = -top - 1
		default:
			sum += n
		}
	}
	return sum
}
