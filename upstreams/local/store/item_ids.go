package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// responseItemIDs is SQLite's migration that finds a response's input
// items by their IDs (for item references and list cursors) in a table
// of their own, response_item_ids, instead of an index of
// response_items: an item's row is written in the order of the
// response's input, and an ID a client chose lands anywhere in an index
// keyed by it, so writing a group of 2,000 items rewrote some 2,000 of
// the index's pages. The IDs of a response are written after its items,
// in ID order and in groups of their own (writeItemIDs), so each group is
// one run of neighbouring keys, as the IDs the gateway makes, in
// sequence, always were. PostgreSQL keeps the index (see the dialect's
// itemIDTables).
const responseItemIDs = `CREATE TABLE response_item_ids (
		id   TEXT NOT NULL,
		seq  {int64} NOT NULL,
		PRIMARY KEY (id, seq)
	){without_rowid};
	INSERT INTO response_item_ids(id, seq) SELECT id, seq FROM response_items ORDER BY id, seq;
	DROP INDEX response_items_id;`

// itemIDTables names, for each items table whose items are found by ID in
// a table of their own where the database has such tables (the dialect's
// itemIDTables), that table (columns id and seq, the item's).
var itemIDTables = map[string]string{"response_items": "response_item_ids"}

// itemIDTable is the table the items of table are found by ID in, empty
// when they are found by an index of table.
func (d *sqlDB) itemIDTable(table string) string {
	if !d.itemIDTables {
		return ""
	}
	return itemIDTables[table]
}

// itemSeqByID is the SQL finding the first seq of the items of table
// whose scope column is the first argument and whose ID is the second.
func (d *sqlDB) itemSeqByID(table, scope string) string {
	if ids := d.itemIDTable(table); ids != "" {
		return `(SELECT MIN(x.seq) FROM ` + ids + ` x JOIN ` + table + ` i ON i.seq = x.seq WHERE i.` + scope + ` = ? AND x.id = ?)`
	}
	return `(SELECT MIN(seq) FROM ` + table + ` WHERE ` + scope + ` = ? AND id = ?)`
}

// itemKey is an item's ID and seq, a row of an item IDs table.
type itemKey struct {
	id  string
	seq int64
}

// sortKeys puts keys in the order of the item IDs table's key.
func sortKeys(keys []itemKey) {
	slices.SortFunc(keys, func(a, b itemKey) int { return cmp.Or(strings.Compare(a.id, b.id), cmp.Compare(a.seq, b.seq)) })
}

// itemKeys reads the keys of the items of table whose parentColumn is
// parentID, in the order of the item IDs table's key.
func (r records) itemKeys(ctx context.Context, table, parentColumn, parentID string) ([]itemKey, error) {
	rows, err := r.db.QueryContext(ctx, r.db.q(`SELECT id, seq FROM `+table+` WHERE `+parentColumn+` = ?`), parentID)
	if err != nil {
		return nil, fmt.Errorf("reading %s IDs: %w", strings.ReplaceAll(table, "_", " "), err)
	}
	keys, err := scanAll(rows, func(rows *sql.Rows) (k itemKey, err error) { return k, rows.Scan(&k.id, &k.seq) })
	if err != nil {
		return nil, fmt.Errorf("reading %s IDs: %w", strings.ReplaceAll(table, "_", " "), err)
	}
	sortKeys(keys)
	return keys, nil
}

// writeItemIDs writes the keys of items, the items of table whose
// parentColumn is parentID, written before in their order and not yet
// seen by readers, into the table's item IDs table (if it has one) in key
// order, itemGroup a transaction.
func (r records) writeItemIDs(ctx context.Context, table, parentColumn, parentID string, items []ResponseItem) error {
	ids := r.db.itemIDTable(table)
	if ids == "" {
		return nil
	}
	keys, err := r.writtenKeys(ctx, table, parentColumn, parentID, items)
	if err != nil {
		return err
	}
	insert := func(n int) string {
		return r.db.q(r.db.insertRows + ids + `(id, seq) VALUES (?,?)` + strings.Repeat(`,(?,?)`, n-1))
	}
	var full *sql.Stmt
	if len(keys) >= itemRows {
		if full, err = r.db.PrepareContext(ctx, insert(itemRows)); err != nil {
			return fmt.Errorf("storing %s: %w", strings.ReplaceAll(ids, "_", " "), err)
		}
		defer full.Close()
	}
	args := make([]any, 0, 2*itemRows)
	for len(keys) > 0 {
		group := keys[:min(len(keys), itemGroup)]
		err := r.inTx(ctx, "storing "+strings.ReplaceAll(ids, "_", " "), func(tx *sql.Tx) error {
			var stmt *sql.Stmt
			if full != nil {
				stmt = tx.StmtContext(ctx, full)
			}
			for rest := group; len(rest) > 0; {
				n := min(len(rest), itemRows)
				args = args[:0]
				for _, k := range rest[:n] {
					args = append(args, k.id, k.seq)
				}
				var err error
				if n == itemRows {
					_, err = stmt.ExecContext(ctx, args...)
				} else {
					_, err = tx.ExecContext(ctx, insert(n), args...)
				}
				if err != nil {
					return fmt.Errorf("storing %s: %w", strings.ReplaceAll(ids, "_", " "), err)
				}
				rest = rest[n:]
			}
			return nil
		})
		if err != nil {
			return err
		}
		keys = keys[len(group):]
	}
	return nil
}

// writtenKeys is the keys of items, written in their order as the items
// of table whose parentColumn is parentID, in key order: their seqs are
// read from the parent's index (the seqs alone, no row), in the order
// they were given, which is the order the items were written in.
func (r records) writtenKeys(ctx context.Context, table, parentColumn, parentID string, items []ResponseItem) ([]itemKey, error) {
	rows, err := r.db.QueryContext(ctx, r.db.q(`SELECT seq FROM `+table+` WHERE `+parentColumn+` = ? ORDER BY seq`), parentID)
	if err != nil {
		return nil, fmt.Errorf("reading %s seqs: %w", strings.ReplaceAll(table, "_", " "), err)
	}
	defer rows.Close()
	keys := make([]itemKey, 0, len(items))
	for rows.Next() {
		if len(keys) == len(items) {
			return nil, fmt.Errorf("reading %s seqs: more than the %d written", strings.ReplaceAll(table, "_", " "), len(items))
		}
		k := itemKey{id: items[len(keys)].ID}
		if err := rows.Scan(&k.seq); err != nil {
			return nil, fmt.Errorf("reading %s seqs: %w", strings.ReplaceAll(table, "_", " "), err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading %s seqs: %w", strings.ReplaceAll(table, "_", " "), err)
	}
	if len(keys) < len(items) {
		return nil, fmt.Errorf("reading %s seqs: %d of the %d written", strings.ReplaceAll(table, "_", " "), len(keys), len(items))
	}
	sortKeys(keys)
	return keys, nil
}

// removeItemIDs deletes the keys of the items of table whose parentColumn
// is parentID from the table's item IDs table (if it has one), in key
// order, itemGroup a statement (each its own transaction). The items are
// removed after, so that a remover stopping half-way leaves the keys of
// the items left to the next.
func (r records) removeItemIDs(ctx context.Context, table, parentColumn, parentID string) error {
	ids := r.db.itemIDTable(table)
	if ids == "" {
		return nil
	}
	keys, err := r.itemKeys(ctx, table, parentColumn, parentID)
	if err != nil {
		return err
	}
	for len(keys) > 0 {
		group := keys[:min(len(keys), itemGroup)]
		// A seq is one item's, so the seqs alone name the rows; the IDs
		// let the delete find them by the table's key, the seqs only
		// checked (+seq: not a second list of the key to seek, which
		// SQLite would seek each pair of).
		args := make([]any, 0, 2*len(group))
		for _, k := range group {
			args = append(args, k.id)
		}
		for _, k := range group {
			args = append(args, k.seq)
		}
		list := strings.TrimSuffix(strings.Repeat("?,", len(group)), ",")
		if _, err := r.db.ExecContext(ctx, r.db.q(`DELETE FROM `+ids+` WHERE id IN (`+list+`) AND +seq IN (`+list+`)`), args...); err != nil {
			return fmt.Errorf("removing %s: %w", strings.ReplaceAll(ids, "_", " "), err)
		}
		keys = keys[len(group):]
	}
	return nil
}
