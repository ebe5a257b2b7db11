package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// One way to page through a list, for every list the stores keep: a page
// is the rows past a cursor (after, or before) in creation order, asked
// for with one row more than the limit to tell whether more follow.

// listRows pages through the rows of table whose scope column (owner, or
// the parent's ID) is value, in creation (seq) order, with extra conditions
// (each starting with AND) and their arguments: a page of q as
// pageClause and queryPage read any list, a cursor being the first row
// of its ID in the scope.
func listRows[T any](ctx context.Context, db *sqlDB, table, columns, where string, args []any, scope, value string, q ListQuery, scan func(rowScanner) (*T, error)) ([]T, bool, error) {
	cond, cursors, order, reverse := pageClause(PageQuery{ListQuery: q}, "seq", func(id string) (string, []any) {
		return db.itemSeqByID(table, scope), []any{value, id}
	})
	args = append(append([]any{value}, args...), cursors...)
	out, hasMore, err := queryPage(ctx, db, `SELECT `+columns+` FROM `+table+` WHERE `+scope+` = ?`+where+cond+` ORDER BY seq `+order+` LIMIT ?`,
		args, q.Limit, reverse, func(rows *sql.Rows) (T, error) {
			v, err := scan(rows)
			if err != nil {
				var zero T
				return zero, err
			}
			return *v, nil
		})
	if err != nil {
		return nil, false, fmt.Errorf("listing %s: %w", table, err)
	}
	return out, hasMore, nil
}

// scanAll reads every row with scan and closes rows.
func scanAll[T any](rows *sql.Rows, scan func(*sql.Rows) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// trimPage cuts the extra row a page query asks for (limit+1) and reports
// whether it was there, i.e. whether more rows follow the page.
func trimPage[T any](out []T, limit int) ([]T, bool) {
	if len(out) > limit {
		return out[:limit], true
	}
	return out, false
}

// pageClause returns the conditions (each starting with " AND "), their
// arguments and the order that select a page of q from rows ordered by
// the column seq; seqOf gives the SQL (and arguments) finding a cursor's
// seq. A page before a cursor is read nearest first, so reverse says to
// turn it back into list order. An unknown cursor yields an empty page.
func pageClause(q PageQuery, seq string, seqOf func(id string) (string, []any)) (cond string, args []any, order string, reverse bool) {
	step := func(desc bool) (cmp, order, past string) {
		if desc {
			return "<", "DESC", "-1"
		}
		return ">", "ASC", "9223372036854775807"
	}
	cmp, order, past := step(q.Desc)
	if q.After != "" {
		sub, a := seqOf(q.After)
		cond += " AND " + seq + " " + cmp + " COALESCE(" + sub + ", " + past + ")"
		args = append(args, a...)
	}
	if q.Before != "" {
		var bcmp, bpast string
		bcmp, order, bpast = step(!q.Desc)
		sub, a := seqOf(q.Before)
		cond += " AND " + seq + " " + bcmp + " COALESCE(" + sub + ", " + bpast + ")"
		args = append(args, a...)
		reverse = true
	}
	return cond, args, order, reverse
}

// queryPage runs a page query (? placeholders) that asks for limit+1 rows
// and returns at most limit of them in list order, and whether more exist.
func queryPage[T any](ctx context.Context, db *sqlDB, query string, args []any, limit int, reverse bool, scan func(*sql.Rows) (T, error)) ([]T, bool, error) {
	rows, err := db.QueryContext(ctx, db.q(query), append(args, limit+1)...)
	if err != nil {
		return nil, false, err
	}
	out, err := scanAll(rows, scan)
	if err != nil {
		return nil, false, err
	}
	out, hasMore := trimPage(out, limit)
	if reverse {
		slices.Reverse(out)
	}
	return out, hasMore, nil
}

// ListQuery pages through a list ordered by creation.
type ListQuery struct {
	Limit int
	// Desc orders newest first.
	Desc bool
	// After is the ID of the last object of the previous page.
	After string
	// Purpose filters files; "" for all.
	Purpose string
}

// PageQuery pages through a list ordered by creation, in either direction.
type PageQuery struct {
	ListQuery
	// Before is the ID of the first object of the next page (the page
	// returned is the one just before it).
	Before string
	// Status filters vector store files; "" for all.
	Status string
}
