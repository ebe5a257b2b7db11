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
	// RemoveAbandonedResponses removes what writes and deletes of
	// responses and appends to conversations that stopped half-way (a
	// crash) left, unseen by readers, and reports how many responses it
	// removed.
	RemoveAbandonedResponses(ctx context.Context) (int, error)
}

// responseHiding hides a response from readers while its items are
// written or removed: hidden_at is when that began, 0 once it is visible.
// CreateResponse writes the row hidden, then the items in groups of their
// own transactions, then shows the response with one small update, so
// that readers see all of its items or none, and no transaction holds the
// write lock for more than a group; DeleteResponse hides it, then removes
// the items in groups. A response hidden for longer than
// abandonedResponseAge was left by a writer or remover that stopped (a
// crash): RemoveAbandonedResponses removes it.
const responseHiding = `ALTER TABLE responses ADD COLUMN hidden_at {int64} NOT NULL DEFAULT 0;
	CREATE INDEX responses_hidden ON responses(hidden_at) WHERE hidden_at > 0;`

// abandonedResponseAge is how long a response may stay hidden before it
// is taken for abandoned: far longer than writing or removing the items
// of the largest request takes (seconds), even waiting for the lock.
const abandonedResponseAge = 3600 // seconds

func (r records) CreateResponse(ctx context.Context, resp *StoredResponse, items []ResponseItem) error {
	hidden := max(Now(), 1)
	if _, err := r.db.ExecContext(ctx, r.db.q(`INSERT INTO responses(id, owner, created_at, previous_id, object, hidden_at) VALUES (?,?,?,?,?,?)`),
		resp.ID, resp.Owner, resp.CreatedAt, resp.PreviousID, string(resp.Object), hidden); err != nil {
		return fmt.Errorf("storing response: %w", err)
	}
	err := r.writeItemGroups(ctx, "response_items", "response_id", resp.ID, items, nil)
	if err == nil {
		err = r.writeItemIDs(ctx, "response_items", "response_id", resp.ID, items)
	}
	if err == nil {
		err = r.writeItemGroups(ctx, "response_outputs", "response_id", resp.ID, resp.Output, nil)
	}
	if err == nil {
		var res sql.Result
		if res, err = r.db.ExecContext(ctx, r.db.q(`UPDATE responses SET hidden_at = 0 WHERE id = ? AND hidden_at = ?`), resp.ID, hidden); err == nil {
			err = foundIfAffected(res)
		}
		if err != nil {
			err = fmt.Errorf("showing the stored response: %w", err)
		}
	}
	if err != nil {
		// What was written goes now, whatever ended the request.
		return errors.Join(err, r.removeResponse(context.WithoutCancel(ctx), resp.ID))
	}
	return nil
}

// removeResponse removes a hidden response: its items a group at a time
// (the input items' IDs first), then its row.
func (r records) removeResponse(ctx context.Context, id string) error {
	if err := r.removeItemIDs(ctx, "response_items", "response_id", id); err != nil {
		return err
	}
	for _, table := range []string{"response_items", "response_outputs"} {
		if err := r.removeItemGroups(ctx, table, "response_id", id); err != nil {
			return err
		}
	}
	if _, err := r.db.ExecContext(ctx, r.db.q(`DELETE FROM responses WHERE id = ? AND hidden_at > 0`), id); err != nil {
		return fmt.Errorf("removing response: %w", err)
	}
	return nil
}

// RemoveAbandonedResponses removes the responses hidden for longer than
// abandonedResponseAge, and reports how many it removed.
func (r records) RemoveAbandonedResponses(ctx context.Context) (int, error) {
	removed := 0
	for {
		rows, err := r.db.QueryContext(ctx, r.db.q(`SELECT id FROM responses WHERE hidden_at > 0 AND hidden_at < ? LIMIT 100`), Now()-abandonedResponseAge)
		if err != nil {
			return removed, fmt.Errorf("finding abandoned responses: %w", err)
		}
		ids, err := scanAll(rows, func(rows *sql.Rows) (id string, err error) { return id, rows.Scan(&id) })
		if err != nil {
			return removed, fmt.Errorf("finding abandoned responses: %w", err)
		}
		for _, id := range ids {
			if err := r.removeResponse(ctx, id); err != nil {
				return removed, err
			}
			removed++
		}
		if len(ids) < 100 {
			return removed, r.removeAbandonedAppends(ctx)
		}
	}
}

func (r records) GetResponse(ctx context.Context, owner, id string) (*StoredResponse, error) {
	resp := StoredResponse{Owner: owner}
	var obj string
	err := r.db.QueryRowContext(ctx, r.db.q(`SELECT id, created_at, previous_id, object FROM responses WHERE owner = ? AND id = ? AND hidden_at = 0`), owner, id).
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
	res, err := r.db.ExecContext(ctx, r.db.q(`UPDATE responses SET hidden_at = ? WHERE owner = ? AND id = ? AND hidden_at = 0`), max(Now(), 1), owner, id)
	if err != nil {
		return fmt.Errorf("deleting response: %w", err)
	}
	if err := foundIfAffected(res); err != nil {
		return err
	}
	return r.removeResponse(ctx, id)
}

func (r records) ResponseItems(ctx context.Context, owner, id string, q ListQuery) ([]ResponseItem, bool, error) {
	if _, err := r.GetResponse(ctx, owner, id); err != nil {
		return nil, false, err
	}
	// A page is read with the response still visible in the same
	// statement: a response deleted meanwhile is no half list.
	return listRows(ctx, r.db, "response_items", "id, item", ` AND EXISTS (SELECT 1 FROM responses WHERE id = ? AND hidden_at = 0)`, []any{id},
		"response_id", id, q, scanResponseItem)
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
	// Each from with the key the items are found by, ordered by its seq.
	inputs := [2]string{"response_items i JOIN responses p ON p.id = i.response_id AND p.hidden_at = 0", "i"}
	if ids := r.db.itemIDTable("response_items"); ids != "" {
		inputs = [2]string{ids + " x JOIN response_items i ON i.seq = x.seq JOIN responses p ON p.id = i.response_id AND p.hidden_at = 0", "x"}
	}
	for _, from := range [][2]string{{"response_outputs i JOIN responses p ON p.id = i.response_id AND p.hidden_at = 0", "i"},
		inputs, {"conversation_items i JOIN conversations p ON p.id = i.conversation_id AND i.seq <= p.shown_seq", "i"}} {
		var item string
		err := r.db.QueryRowContext(ctx, r.db.q(`SELECT i.item FROM `+from[0]+` WHERE `+from[1]+`.id = ? AND p.owner = ? ORDER BY `+from[1]+`.seq DESC LIMIT 1`), itemID, owner).Scan(&item)
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
