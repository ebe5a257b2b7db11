package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// copyItems writes the items of the parent into table with one COPY, in a
// transaction of its own after fence, if not nil, changed its row
// (PostgreSQL): the rows go as data, with no statement to parse or plan
// for them.
func (r records) copyItems(ctx context.Context, table, parentColumn, parentID string, items []ResponseItem, fence *itemFence) error {
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
		tx, err := pc.Conn().Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(context.WithoutCancel(ctx))
		if fence != nil {
			tag, err := tx.Exec(ctx, fence.query, fence.args...)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				return fence.lost
			}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{table}, []string{"id", parentColumn, "item"},
			pgx.CopyFromSlice(len(items), func(i int) ([]any, error) { return []any{items[i].ID, parentID, string(items[i].Item)}, nil })); err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
	if err != nil {
		return fmt.Errorf("storing %s: %w", strings.ReplaceAll(table, "_", " "), err)
	}
	return nil
}
