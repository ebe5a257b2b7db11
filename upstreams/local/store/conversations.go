package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// conversationTables is the conversations migration on either database: a
// conversation (its metadata) and its items, in the order they were added,
// each the public item object as JSON.
const conversationTables = `CREATE TABLE conversations (
		seq          {seq},
		id           TEXT NOT NULL UNIQUE,
		owner        TEXT NOT NULL,
		created_at   {int64} NOT NULL,
		metadata     TEXT NOT NULL
	);
	CREATE TABLE conversation_items (
		seq              {seq},
		id               TEXT NOT NULL,
		conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
		item             TEXT NOT NULL
	);
	CREATE INDEX conversation_items_conversation ON conversation_items(conversation_id, seq);`

// conversationDeletion is the migration that keeps a deleted
// conversation's items, as the public API does ("Items in the
// conversation will not be deleted"): a deleted conversation is marked
// with deleted_at, answers as a missing one, and its items stay for item
// references, found by their IDs.
const conversationDeletion = `ALTER TABLE conversations ADD COLUMN deleted_at {int64};
	CREATE INDEX conversation_items_id ON conversation_items(id);`

// Conversation is a stored conversation.
type Conversation struct {
	ID        string
	Owner     string
	CreatedAt int64
	Metadata  json.RawMessage
}

// ConversationStore keeps conversations and their items (public item
// objects with their IDs, as responses keep their input items).
type ConversationStore interface {
	CreateConversation(ctx context.Context, c *Conversation, items []ResponseItem) error
	GetConversation(ctx context.Context, owner, id string) (*Conversation, error)
	UpdateConversation(ctx context.Context, owner, id string, metadata json.RawMessage) (*Conversation, error)
	// DeleteConversation removes a conversation; its items are kept,
	// for item references (ResponseItem), as the public API keeps them.
	DeleteConversation(ctx context.Context, owner, id string) error
	// AddConversationItems appends items to a conversation, after those it holds.
	AddConversationItems(ctx context.Context, owner, id string, items []ResponseItem) error
	// ConversationItems pages through a conversation's items.
	ConversationItems(ctx context.Context, owner, id string, q ListQuery) (items []ResponseItem, hasMore bool, err error)
	// ConversationItem is an item of a conversation (the first added of
	// that ID).
	ConversationItem(ctx context.Context, owner, id, itemID string) (*ResponseItem, error)
	// DeleteConversationItem removes an item from a conversation.
	DeleteConversationItem(ctx context.Context, owner, id, itemID string) error
}

// liveConversation is the condition, with the owner and the
// conversation's ID as arguments, that a conversations row is that
// owner's conversation and not deleted.
const liveConversation = `owner = ? AND id = ? AND deleted_at IS NULL`

// ownedConversation is the condition, with the same arguments, that
// conversation_id names a conversation of that owner, not deleted, and
// that the item is shown (see conversationAppends).
const ownedConversation = `conversation_id IN (SELECT id FROM conversations WHERE ` + liveConversation + `) AND ` + shownItem

func (r records) CreateConversation(ctx context.Context, c *Conversation, items []ResponseItem) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("creating conversation: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, r.db.q(`INSERT INTO conversations(id, owner, created_at, metadata) VALUES (?,?,?,?)`),
		c.ID, c.Owner, c.CreatedAt, string(c.Metadata)); err != nil {
		return fmt.Errorf("creating conversation: %w", err)
	}
	if err := r.writeItems(ctx, tx, "conversation_items", "conversation_id", c.ID, items); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, r.db.q(`UPDATE conversations SET shown_seq = `+lastItemSeq+` WHERE id = ?`), c.ID, c.ID); err != nil {
		return fmt.Errorf("creating conversation: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("creating conversation: %w", err)
	}
	return nil
}

func (r records) GetConversation(ctx context.Context, owner, id string) (*Conversation, error) {
	c := Conversation{Owner: owner}
	var meta string
	err := r.db.QueryRowContext(ctx, r.db.q(`SELECT id, created_at, metadata FROM conversations WHERE `+liveConversation), owner, id).
		Scan(&c.ID, &c.CreatedAt, &meta)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading conversation: %w", err)
	}
	c.Metadata = json.RawMessage(meta)
	return &c, nil
}

func (r records) UpdateConversation(ctx context.Context, owner, id string, metadata json.RawMessage) (*Conversation, error) {
	res, err := r.db.ExecContext(ctx, r.db.q(`UPDATE conversations SET metadata = ? WHERE `+liveConversation), string(metadata), owner, id)
	if err != nil {
		return nil, fmt.Errorf("updating conversation: %w", err)
	}
	if err := foundIfAffected(res); err != nil {
		return nil, err
	}
	return r.GetConversation(ctx, owner, id)
}

func (r records) DeleteConversation(ctx context.Context, owner, id string) error {
	res, err := r.db.ExecContext(ctx, r.db.q(`UPDATE conversations SET deleted_at = ? WHERE `+liveConversation), Now(), owner, id)
	if err != nil {
		return fmt.Errorf("deleting conversation: %w", err)
	}
	return foundIfAffected(res)
}

func (r records) ConversationItems(ctx context.Context, owner, id string, q ListQuery) ([]ResponseItem, bool, error) {
	if _, err := r.GetConversation(ctx, owner, id); err != nil {
		return nil, false, err
	}
	return listRows(ctx, r.db, "conversation_items", "id, item", ` AND seq <= (SELECT shown_seq FROM conversations WHERE id = ?)`, []any{id}, "conversation_id", id, q, scanResponseItem)
}

func (r records) ConversationItem(ctx context.Context, owner, id, itemID string) (*ResponseItem, error) {
	it, err := scanResponseItem(r.db.QueryRowContext(ctx, r.db.q(`SELECT id, item FROM conversation_items WHERE `+ownedConversation+` AND id = ? ORDER BY seq LIMIT 1`),
		owner, id, itemID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading conversation item: %w", err)
	}
	return it, nil
}

func (r records) DeleteConversationItem(ctx context.Context, owner, id, itemID string) error {
	res, err := r.db.ExecContext(ctx, r.db.q(`DELETE FROM conversation_items WHERE `+ownedConversation+` AND id = ?`), owner, id, itemID)
	if err != nil {
		return fmt.Errorf("deleting conversation item: %w", err)
	}
	return foundIfAffected(res)
}
