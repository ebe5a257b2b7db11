package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// copyItems writes the items of the parent into table with one COPY, a
// transaction of its own (PostgreSQL): the rows go as data, with no
// statement to parse or plan for them.
func (r records) copyItems(ctx context.Context, table, parentColumn, parentID string, items []ResponseItem) error {
	conn, err := r.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("storing %s: %w", strings.ReplaceAll(table, "_", " "), err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		pc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("a %T is no PostgreSQL connection", dc)
		}
		_, err := pc.Conn().CopyFrom(ctx, pgx.Identifier{table}, []string{"id", parentColumn, "item"},
			pgx.CopyFromSlice(len(items), func(i int) ([]any, error) { return []any{items[i].ID, parentID, string(items[i].Item)}, nil }))
		return err
	})
	if err != nil {
		return fmt.Errorf("storing %s: %w", strings.ReplaceAll(table, "_", " "), err)
	}
	return nil
}
