package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// The gateway keeps two things of its own in the store: the API keys its
// management API issues, and what each key spent. Their tables are a
// migration track of their own (gatewayMigrations, recorded in
// gateway_migrations), so they never interleave with the local
// upstream's tables.

// ErrNameTaken: another key of the same owner has that name.
var ErrNameTaken = errors.New("another key of this owner has that name")

// APIKey is a key issued through the management API. Its secret is never
// stored: Digest is its hex SHA-256.
type APIKey struct {
	ID     string
	Digest string
	Name   string
	Owner  string
	// Config is the key's configuration as the gateway's Caddyfile keys
	// are configured (JSON of the same struct).
	Config    json.RawMessage
	Metadata  json.RawMessage // a JSON object, or nil
	CreatedAt int64
	ExpiresAt *int64
	RevokedAt *int64
	// Version orders the changes: each write of a key gives it the next
	// version of all keys, so KeysSince finds every change once.
	Version int64
}

// SpendRow is the spend of one key, owner, model and upstream in one hour
// (or, summed by Spend, in a period).
type SpendRow struct {
	Hour     int64 // Unix seconds of the hour's start, UTC
	KeyName  string
	Owner    string
	Model    string
	Upstream string
	// Pico is the cost of the priced work in picodollars; Requests counts
	// the priced replies, Unpriced those whose model had no price.
	Pico, Requests, Unpriced int64
}

// GatewayStore keeps the gateway's issued keys and its spend.
type GatewayStore interface {
	// CreateKey stores a new key; ErrNameTaken when its owner has a key of
	// that name.
	CreateKey(ctx context.Context, k *APIKey) error
	// UpdateKey changes key id with change (which may refuse with its own
	// error) and stores it with the next version; ErrNotFound when there
	// is no such key, ErrNameTaken when the new name is taken.
	UpdateKey(ctx context.Context, id string, change func(*APIKey) error) (*APIKey, error)
	GetKey(ctx context.Context, id string) (*APIKey, error)
	// KeysSince lists the keys changed after version, oldest change first
	// (every key for version 0), up to limit.
	KeysSince(ctx context.Context, version int64, limit int) ([]APIKey, error)
	// AddSpend adds the rows to the hours' totals, in one transaction.
	AddSpend(ctx context.Context, rows []SpendRow) error
	// Spend sums the hours in [from, to) by key, owner, model and
	// upstream (Hour is zero).
	Spend(ctx context.Context, from, to int64) ([]SpendRow, error)
}

// gatewayTables is the first gateway migration on either database.
const gatewayTables = `CREATE TABLE gateway_keys (
		id         TEXT PRIMARY KEY,
		digest     TEXT NOT NULL UNIQUE,
		name       TEXT NOT NULL,
		owner      TEXT NOT NULL,
		config     TEXT NOT NULL,
		metadata   TEXT,
		created_at {int64} NOT NULL,
		expires_at {int64},
		revoked_at {int64},
		version    {int64} NOT NULL,
		UNIQUE (owner, name)
	);
	CREATE INDEX gateway_keys_version ON gateway_keys(version);
	CREATE TABLE gateway_key_version (
		id      INTEGER PRIMARY KEY CHECK (id = 1),
		version {int64} NOT NULL
	);
	INSERT INTO gateway_key_version(id, version) VALUES (1, 0);
	CREATE TABLE gateway_spend (
		hour      {int64} NOT NULL,
		key_name  TEXT NOT NULL,
		owner     TEXT NOT NULL,
		model     TEXT NOT NULL,
		upstream  TEXT NOT NULL,
		pico      {int64} NOT NULL,
		requests  {int64} NOT NULL,
		unpriced  {int64} NOT NULL,
		PRIMARY KEY (hour, key_name, owner, model, upstream)
	){without_rowid};`

var (
	sqliteGatewayMigrations   = []string{sqliteTypes.Replace(gatewayTables)}
	postgresGatewayMigrations = []string{postgresTypes.Replace(gatewayTables)}
)

// migrateGateway applies the gateway's migration track.
func migrateGateway(ctx context.Context, d *sqlDB, migrations []string, lock string) error {
	return migrateTrack(ctx, d, "gateway_migrations", migrations, lock)
}

const keyColumns = `id, digest, name, owner, config, metadata, created_at, expires_at, revoked_at, version`

func scanKey(row rowScanner) (*APIKey, error) {
	var k APIKey
	var config string
	var metadata sql.NullString
	var expires, revoked sql.NullInt64
	if err := row.Scan(&k.ID, &k.Digest, &k.Name, &k.Owner, &config, &metadata, &k.CreatedAt, &expires, &revoked, &k.Version); err != nil {
		return nil, err
	}
	k.Config = json.RawMessage(config)
	if metadata.Valid {
		k.Metadata = json.RawMessage(metadata.String)
	}
	if expires.Valid {
		k.ExpiresAt = &expires.Int64
	}
	if revoked.Valid {
		k.RevokedAt = &revoked.Int64
	}
	return &k, nil
}

// nextKeyVersion takes the next version of the keys. The row it updates
// is locked until the transaction ends, so writers of keys take turns and
// versions become visible in the order they were taken.
func (r records) nextKeyVersion(ctx context.Context, tx *sql.Tx) (int64, error) {
	var v int64
	if err := tx.QueryRowContext(ctx, `UPDATE gateway_key_version SET version = version + 1 WHERE id = 1 RETURNING version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("taking a key version: %w", err)
	}
	return v, nil
}

// nameTaken reports whether another key than id has the owner and name.
func (r records) nameTaken(ctx context.Context, tx *sql.Tx, id, owner, name string) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, r.db.q(`SELECT COUNT(*) FROM gateway_keys WHERE owner = ? AND name = ? AND id <> ?`), owner, name, id).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("checking the key's name: %w", err)
	}
	return n > 0, nil
}

func nullJSON(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	return string(raw)
}

func (r records) CreateKey(ctx context.Context, k *APIKey) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storing key: %w", err)
	}
	defer tx.Rollback()
	if k.Version, err = r.nextKeyVersion(ctx, tx); err != nil {
		return err
	}
	if taken, err := r.nameTaken(ctx, tx, k.ID, k.Owner, k.Name); err != nil || taken {
		if taken {
			return ErrNameTaken
		}
		return err
	}
	_, err = tx.ExecContext(ctx, r.db.q(`INSERT INTO gateway_keys(`+keyColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?)`),
		k.ID, k.Digest, k.Name, k.Owner, string(k.Config), nullJSON(k.Metadata), k.CreatedAt, k.ExpiresAt, k.RevokedAt, k.Version)
	if err != nil {
		return fmt.Errorf("storing key: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storing key: %w", err)
	}
	return nil
}

func (r records) UpdateKey(ctx context.Context, id string, change func(*APIKey) error) (*APIKey, error) {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("updating key: %w", err)
	}
	defer tx.Rollback()
	version, err := r.nextKeyVersion(ctx, tx)
	if err != nil {
		return nil, err
	}
	k, err := scanKey(tx.QueryRowContext(ctx, r.db.q(`SELECT `+keyColumns+` FROM gateway_keys WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading key: %w", err)
	}
	if err := change(k); err != nil {
		return nil, err
	}
	if taken, err := r.nameTaken(ctx, tx, k.ID, k.Owner, k.Name); err != nil || taken {
		if taken {
			return nil, ErrNameTaken
		}
		return nil, err
	}
	k.Version = version
	_, err = tx.ExecContext(ctx, r.db.q(`UPDATE gateway_keys SET digest = ?, name = ?, owner = ?, config = ?, metadata = ?,
		expires_at = ?, revoked_at = ?, version = ? WHERE id = ?`),
		k.Digest, k.Name, k.Owner, string(k.Config), nullJSON(k.Metadata), k.ExpiresAt, k.RevokedAt, k.Version, id)
	if err != nil {
		return nil, fmt.Errorf("updating key: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("updating key: %w", err)
	}
	return k, nil
}

func (r records) GetKey(ctx context.Context, id string) (*APIKey, error) {
	k, err := scanKey(r.db.QueryRowContext(ctx, r.db.q(`SELECT `+keyColumns+` FROM gateway_keys WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading key: %w", err)
	}
	return k, nil
}

func (r records) KeysSince(ctx context.Context, version int64, limit int) ([]APIKey, error) {
	rows, err := r.db.QueryContext(ctx, r.db.q(`SELECT `+keyColumns+` FROM gateway_keys WHERE version > ? ORDER BY version LIMIT ?`), version, limit)
	if err != nil {
		return nil, fmt.Errorf("listing keys: %w", err)
	}
	defer rows.Close()
	var out []APIKey
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, fmt.Errorf("listing keys: %w", err)
		}
		out = append(out, *k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing keys: %w", err)
	}
	return out, nil
}

func (r records) AddSpend(ctx context.Context, spend []SpendRow) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("recording spend: %w", err)
	}
	defer tx.Rollback()
	for _, s := range spend {
		_, err := tx.ExecContext(ctx, r.db.q(`INSERT INTO gateway_spend(hour, key_name, owner, model, upstream, pico, requests, unpriced)
			VALUES (?,?,?,?,?,?,?,?)
			ON CONFLICT (hour, key_name, owner, model, upstream) DO UPDATE SET pico = gateway_spend.pico + excluded.pico,
				requests = gateway_spend.requests + excluded.requests, unpriced = gateway_spend.unpriced + excluded.unpriced`),
			s.Hour, s.KeyName, s.Owner, s.Model, s.Upstream, s.Pico, s.Requests, s.Unpriced)
		if err != nil {
			return fmt.Errorf("recording spend: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("recording spend: %w", err)
	}
	return nil
}

func (r records) Spend(ctx context.Context, from, to int64) ([]SpendRow, error) {
	rows, err := r.db.QueryContext(ctx, r.db.q(`SELECT key_name, owner, model, upstream, SUM(pico), SUM(requests), SUM(unpriced)
		FROM gateway_spend WHERE hour >= ? AND hour < ? GROUP BY key_name, owner, model, upstream
		ORDER BY key_name, owner, model, upstream`), from, to)
	if err != nil {
		return nil, fmt.Errorf("reading spend: %w", err)
	}
	defer rows.Close()
	var out []SpendRow
	for rows.Next() {
		var s SpendRow
		if err := rows.Scan(&s.KeyName, &s.Owner, &s.Model, &s.Upstream, &s.Pico, &s.Requests, &s.Unpriced); err != nil {
			return nil, fmt.Errorf("reading spend: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading spend: %w", err)
	}
	return out, nil
}
