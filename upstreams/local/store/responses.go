package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// responseTables is the responses migration on either database: a stored
// response (the public object as JSON, with the previous response it
// continues) and the input items it was created with, in order.
const responseTables = `CREATE TABLE responses (
		seq          {seq},
		id           TEXT NOT NULL UNIQUE,
		owner        TEXT NOT NULL,
		created_at   {int64} NOT NULL,
		previous_id  TEXT NOT NULL DEFAULT '',
		object       TEXT NOT NULL
	);
	CREATE TABLE response_items (
		seq          {seq},
		id           TEXT NOT NULL,
		response_id  TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
		item         TEXT NOT NULL
	);
	CREATE INDEX response_items_response ON response_items(response_id, seq);`

// responseItemIndex finds a stored response's items by their IDs, for
// the item references of later requests: its input items, and its output
// items, kept beside the response object as they are in it.
const responseItemIndex = `CREATE INDEX response_items_id ON response_items(id);
	CREATE TABLE response_outputs (
		seq          {seq},
		id           TEXT NOT NULL,
		response_id  TEXT NOT NULL REFERENCES responses(id) ON DELETE CASCADE,
		item         TEXT NOT NULL
	);
	CREATE INDEX response_outputs_id ON response_outputs(id);`

// StoredResponse is a response kept for retrieval and continuation.
type StoredResponse struct {
	ID         string
	Owner      string
	CreatedAt  int64
	PreviousID string
	// Object is the public response object.
	Object json.RawMessage
	// Output is the output items of Object, found by ID with
	// ResponseStore.ResponseItem.
	Output []ResponseItem
}

// ResponseItem is one input item of a stored response, with its public ID.
type ResponseItem struct {
	ID   string
	Item json.RawMessage
}

// ResponseStore keeps responses created with `store` and their input items.
type ResponseStore interface {
	CreateResponse(ctx context.Context, r *StoredResponse, items []ResponseItem) error
	GetResponse(ctx context.Context, owner, id string) (*StoredResponse, error)
	DeleteResponse(ctx context.Context, owner, id string) error
	// ResponseItems pages through a response's input items.
	ResponseItems(ctx context.Context, owner, id string, q ListQuery) (items []ResponseItem, hasMore bool, err error)
	// ResponseItem is the item of owner's stored responses with the ID
	// itemID: an output item, else an input item, else an item of one of
	// owner's conversations (deleted ones included: their items are
	// kept), the latest stored where the ID is the same in several;
	// ErrNotFound if none has it.
	ResponseItem(ctx context.Context, owner, itemID string) (json.RawMessage, error)
}

func (r records) CreateResponse(ctx context.Context, resp *StoredResponse, items []ResponseItem) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storing response: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, r.db.q(`INSERT INTO responses(id, owner, created_at, previous_id, object) VALUES (?,?,?,?,?)`),
		resp.ID, resp.Owner, resp.CreatedAt, resp.PreviousID, string(resp.Object)); err != nil {
		return fmt.Errorf("storing response: %w", err)
	}
	if err := r.insertItems(ctx, tx, "response_items", "response_id", resp.ID, items); err != nil {
		return err
	}
	if err := r.insertItems(ctx, tx, "response_outputs", "response_id", resp.ID, resp.Output); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storing response: %w", err)
	}
	return nil
}

func (r records) GetResponse(ctx context.Context, owner, id string) (*StoredResponse, error) {
	resp := StoredResponse{Owner: owner}
	var obj string
	err := r.db.QueryRowContext(ctx, r.db.q(`SELECT id, created_at, previous_id, object FROM responses WHERE owner = ? AND id = ?`), owner, id).
		Scan(&resp.ID, &resp.CreatedAt, &resp.PreviousID, &obj)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading response: %w", err)
	}
	resp.Object = json.RawMessage(obj)
	return &resp, nil
}

func (r records) DeleteResponse(ctx context.Context, owner, id string) error {
	res, err := r.db.ExecContext(ctx, r.db.q(`DELETE FROM responses WHERE owner = ? AND id = ?`), owner, id)
	if err != nil {
		return fmt.Errorf("deleting response: %w", err)
	}
	return foundIfAffected(res)
}

func (r records) ResponseItems(ctx context.Context, owner, id string, q ListQuery) ([]ResponseItem, bool, error) {
	if _, err := r.GetResponse(ctx, owner, id); err != nil {
		return nil, false, err
	}
	return listRows(ctx, r.db, "response_items", "id, item", "", nil, "response_id", id, q, scanResponseItem)
}

// scanResponseItem reads the columns id, item of a response's or a
// conversation's item.
func scanResponseItem(row rowScanner) (*ResponseItem, error) {
	var it ResponseItem
	var item string
	if err := row.Scan(&it.ID, &item); err != nil {
		return nil, err
	}
	it.Item = json.RawMessage(item)
	return &it, nil
}

func (r records) ResponseItem(ctx context.Context, owner, itemID string) (json.RawMessage, error) {
	for _, from := range []string{"response_outputs i JOIN responses p ON p.id = i.response_id", "response_items i JOIN responses p ON p.id = i.response_id",
		"conversation_items i JOIN conversations p ON p.id = i.conversation_id"} {
		var item string
		err := r.db.QueryRowContext(ctx, r.db.q(`SELECT i.item FROM `+from+`
			WHERE i.id = ? AND p.owner = ? ORDER BY i.seq DESC LIMIT 1`), itemID, owner).Scan(&item)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading response item: %w", err)
		}
		return json.RawMessage(item), nil
	}
	return nil, ErrNotFound
}
