package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// itemRows is how many items one INSERT statement writes: a statement
// is planned once for them all, within both databases' bounds on a
// statement's parameters.
const itemRows = 500

// itemGroup is how many items one transaction of a grouped write
// (writeItemGroups) writes or removes: it bounds how long the write holds
// SQLite's write lock (some 10 ms of CPU), so that other owners' writes
// are not held up for a whole response.
const itemGroup = 4 * itemRows

// itemInsert is the statement writing n items of a parent into table.
func (r records) itemInsert(table, parentColumn string, n int) string {
	return r.db.q(r.db.insertRows + table + `(id, ` + parentColumn + `, item) VALUES (?,?,?)` + strings.Repeat(`,(?,?,?)`, n-1))
}

// prepareItems prepares the statement writing itemRows items into table
// when there are as many, to be run in each transaction (sql.Tx.Stmt)
// without parsing it again; nil when fewer.
func (r records) prepareItems(ctx context.Context, table, parentColumn string, n int) (*sql.Stmt, error) {
	if n < itemRows {
		return nil, nil
	}
	stmt, err := r.db.PrepareContext(ctx, r.itemInsert(table, parentColumn, itemRows))
	if err != nil {
		return nil, fmt.Errorf("storing %s: %w", strings.ReplaceAll(table, "_", " "), err)
	}
	return stmt, nil
}

// insertItems writes the items of the parent (a response's input or
// output items, a conversation's) into table in tx, in their order,
// itemRows a statement; full, when not nil, is prepareItems' statement.
func (r records) insertItems(ctx context.Context, tx *sql.Tx, full *sql.Stmt, table, parentColumn, parentID string, items []ResponseItem) error {
	if full != nil {
		full = tx.StmtContext(ctx, full)
	}
	args := make([]any, 0, 3*min(len(items), itemRows))
	for len(items) > 0 {
		n := min(len(items), itemRows)
		args = args[:0]
		for _, it := range items[:n] {
			args = append(args, it.ID, parentID, string(it.Item))
		}
		var err error
		if n == itemRows && full != nil {
			_, err = full.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, r.itemInsert(table, parentColumn, n), args...)
		}
		if err != nil {
			return fmt.Errorf("storing %s: %w", strings.ReplaceAll(table, "_", " "), err)
		}
		items = items[n:]
	}
	return nil
}

// writeItems writes items in tx as insertItems does, the statement of
// itemRows items prepared once.
func (r records) writeItems(ctx context.Context, tx *sql.Tx, table, parentColumn, parentID string, items []ResponseItem) error {
	full, err := r.prepareItems(ctx, table, parentColumn, len(items))
	if err != nil {
		return err
	}
	if full != nil {
		defer full.Close()
	}
	return r.insertItems(ctx, tx, full, table, parentColumn, parentID, items)
}

// itemFence is a statement (bound for the database) that each
// transaction of a grouped write (writeItemGroups) runs first: a group is
// written only where it changes a row, which it locks until the group
// commits (a lease still held); else the write stops with lost.
type itemFence struct {
	query string
	args  []any
	lost  error
}

// check runs the fence in tx.
func (f *itemFence) check(ctx context.Context, tx interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}) error {
	if f == nil {
		return nil
	}
	res, err := tx.ExecContext(ctx, f.query, f.args...)
	if err != nil {
		return fmt.Errorf("checking a grouped write's fence: %w", err)
	}
	return noneIs(res, f.lost)
}

// writeItemGroups writes the items of a parent that readers do not see
// yet, itemGroup a transaction, so that no transaction holds the
// database's write lock for more than a group: INSERTs of a statement
// prepared once, or COPYs where the database has them (copyRows). fence,
// when not nil, is run first in each group's transaction.
func (r records) writeItemGroups(ctx context.Context, table, parentColumn, parentID string, items []ResponseItem, fence *itemFence) error {
	var full *sql.Stmt
	if !r.db.copyRows {
		var err error
		if full, err = r.prepareItems(ctx, table, parentColumn, len(items)); err != nil {
			return err
		}
		if full != nil {
			defer full.Close()
		}
	}
	for len(items) > 0 {
		n := min(len(items), itemGroup)
		var err error
		if r.db.copyRows {
			err = r.copyItems(ctx, table, parentColumn, parentID, items[:n], fence)
		} else {
			err = r.inTx(ctx, "storing "+strings.ReplaceAll(table, "_", " "), func(tx *sql.Tx) error {
				if err := fence.check(ctx, tx); err != nil {
					return err
				}
				return r.insertItems(ctx, tx, full, table, parentColumn, parentID, items[:n])
			})
		}
		if err != nil {
			return err
		}
		items = items[n:]
	}
	return nil
}

// removeItemGroups deletes the rows of table whose parentColumn is
// parentID, itemGroup a statement (each its own transaction).
func (r records) removeItemGroups(ctx context.Context, table, parentColumn, parentID string) error {
	query := r.db.q(`DELETE FROM ` + table + ` WHERE seq IN (SELECT seq FROM ` + table + ` WHERE ` + parentColumn + ` = ? LIMIT ?)`)
	for {
		res, err := r.db.ExecContext(ctx, query, parentID, itemGroup)
		if err != nil {
			return fmt.Errorf("removing %s: %w", strings.ReplaceAll(table, "_", " "), err)
		}
		if n, err := res.RowsAffected(); err != nil || n < itemGroup {
			return err // nil once a statement found less than a group
		}
	}
}

// inTx runs f in a transaction, committed if f succeeds; what describes
// the work in errors.
func (r records) inTx(ctx context.Context, what string, f func(*sql.Tx) error) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
