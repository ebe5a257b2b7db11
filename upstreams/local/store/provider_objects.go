package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// providerObjectTables is the migration of the provider objects' owners
// on either database: which owner created each object (a response, file,
// vector store, batch, conversation or thread) a provider keeps for the
// gateway, by kind and the provider's ID.
const providerObjectTables = `CREATE TABLE provider_objects (
		kind       TEXT NOT NULL,
		id         TEXT NOT NULL,
		owner      TEXT NOT NULL,
		created_at {int64} NOT NULL,
		PRIMARY KEY (kind, id)
	);
	CREATE INDEX provider_objects_created ON provider_objects(created_at);`

// ProviderObjectStore keeps the owners of objects a provider stores for
// the gateway, so that only their owner can reach them through it.
type ProviderObjectStore interface {
	// RecordProviderObject notes that owner created the object; an object
	// recorded already keeps its first owner.
	RecordProviderObject(ctx context.Context, kind, id, owner string, at int64) error
	// ProviderObjectOwner is the owner of an object, ErrNotFound when
	// none was recorded.
	ProviderObjectOwner(ctx context.Context, kind, id string) (string, error)
	// ForgetProviderObject removes an object's row (it was deleted).
	ForgetProviderObject(ctx context.Context, kind, id string) error
	// OwnedProviderObjects are those of ids that owner created.
	OwnedProviderObjects(ctx context.Context, owner, kind string, ids []string) (map[string]bool, error)
	// ForgetProviderObjectsBefore removes up to limit rows recorded before
	// at and says how many it removed.
	ForgetProviderObjectsBefore(ctx context.Context, at int64, limit int) (int64, error)
}

func (r records) RecordProviderObject(ctx context.Context, kind, id, owner string, at int64) error {
	_, err := r.db.ExecContext(ctx, r.db.q(`INSERT INTO provider_objects(kind, id, owner, created_at) VALUES (?,?,?,?) ON CONFLICT (kind, id) DO NOTHING`),
		kind, id, owner, at)
	if err != nil {
		return fmt.Errorf("recording the owner of %s %s: %w", kind, id, err)
	}
	return nil
}

func (r records) ProviderObjectOwner(ctx context.Context, kind, id string) (string, error) {
	var owner string
	err := r.db.QueryRowContext(ctx, r.db.q(`SELECT owner FROM provider_objects WHERE kind = ? AND id = ?`), kind, id).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("reading the owner of %s %s: %w", kind, id, err)
	}
	return owner, nil
}

func (r records) ForgetProviderObject(ctx context.Context, kind, id string) error {
	if _, err := r.db.ExecContext(ctx, r.db.q(`DELETE FROM provider_objects WHERE kind = ? AND id = ?`), kind, id); err != nil {
		return fmt.Errorf("forgetting %s %s: %w", kind, id, err)
	}
	return nil
}

// maxOwnedQuery bounds the IDs OwnedProviderObjects asks about at once
// (a list page holds at most 100).
const maxOwnedQuery = 500

func (r records) OwnedProviderObjects(ctx context.Context, owner, kind string, ids []string) (map[string]bool, error) {
	owned := make(map[string]bool, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), maxOwnedQuery)
		args := make([]any, 0, n+2)
		args = append(args, owner, kind)
		for _, id := range ids[:n] {
			args = append(args, id)
		}
		query := `SELECT id FROM provider_objects WHERE owner = ? AND kind = ? AND id IN (?` + strings.Repeat(",?", n-1) + `)`
		rows, err := r.db.QueryContext(ctx, r.db.q(query), args...)
		if err != nil {
			return nil, fmt.Errorf("reading owned %ss: %w", kind, err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("reading owned %ss: %w", kind, err)
			}
			owned[id] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("reading owned %ss: %w", kind, err)
		}
		ids = ids[n:]
	}
	return owned, nil
}

func (r records) ForgetProviderObjectsBefore(ctx context.Context, at int64, limit int) (int64, error) {
	res, err := r.db.ExecContext(ctx, r.db.q(`DELETE FROM provider_objects WHERE (kind, id) IN
		(SELECT kind, id FROM provider_objects WHERE created_at < ? ORDER BY created_at LIMIT ?)`), at, limit)
	if err != nil {
		return 0, fmt.Errorf("forgetting old provider objects: %w", err)
	}
	return res.RowsAffected()
}
