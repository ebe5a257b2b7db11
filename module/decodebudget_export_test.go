package modelgate

import "slices"

// DecodeBudgetSizes are the decode_budget sizes whose budgets the process
// holds (decodeBudgets), in order.
func DecodeBudgetSizes() []int64 {
	var sizes []int64
	decodeBudgets.Range(func(_, v any) bool {
		sizes = append(sizes, v.(*decodeBudget).size)
		return true
	})
	slices.Sort(sizes)
	return sizes
}
