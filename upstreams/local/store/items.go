package store

import (
	"context"
	"fmt"
	"strings"
)

// itemRows is how many items one INSERT statement writes: a statement
// is parsed and planned once for them all (199,000 items one statement
// each took 5 s of a response's 10 s of CPU, and held the write lock as
// long), within both databases' bounds on a statement's parameters.
const itemRows = 500

// insertItems writes the items of the parent (a response's input or
// output items, a conversation's) into table, in their order, itemRows a
// statement.
func (r records) insertItems(ctx context.Context, ex execer, table, parentColumn, parentID string, items []ResponseItem) error {
	var full string
	args := make([]any, 0, 3*min(len(items), itemRows))
	for len(items) > 0 {
		n := min(len(items), itemRows)
		query := full
		if query == "" || n < itemRows {
			query = r.db.q(`INSERT INTO ` + table + `(id, ` + parentColumn + `, item) VALUES (?,?,?)` + strings.Repeat(`,(?,?,?)`, n-1))
			if n == itemRows {
				full = query
			}
		}
		args = args[:0]
		for _, it := range items[:n] {
			args = append(args, it.ID, parentID, string(it.Item))
		}
		if _, err := ex.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("storing %s: %w", strings.ReplaceAll(table, "_", " "), err)
		}
		items = items[n:]
	}
	return nil
}
