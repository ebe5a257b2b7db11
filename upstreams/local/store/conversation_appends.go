package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// conversationAppends is the migration that lets an append to a
// conversation write its items in groups of their own transactions, as a
// response's are, with readers seeing all of them or none: a
// conversation's items are shown up to shown_seq (the seq of the last
// item of the last append finished), and the append under way holds the
// conversation's lease (append_lease, its token, until appending_until;
// 0 when none does), so that appends take turns and a crashed append's
// items are removed once its lease has run out. The partial index finds
// the leases left behind for RemoveAbandonedResponses.
const conversationAppends = `ALTER TABLE conversations ADD COLUMN shown_seq {int64} NOT NULL DEFAULT 0;
	ALTER TABLE conversations ADD COLUMN append_lease TEXT NOT NULL DEFAULT '';
	ALTER TABLE conversations ADD COLUMN appending_until {int64} NOT NULL DEFAULT 0;
	UPDATE conversations SET shown_seq = COALESCE((SELECT MAX(seq) FROM conversation_items WHERE conversation_id = conversations.id), 0);
	CREATE INDEX conversations_appending ON conversations(appending_until) WHERE appending_until > 0;`

// shownItem is the condition that a row of conversation_items is shown.
const shownItem = `conversation_items.seq <= (SELECT c.shown_seq FROM conversations c WHERE c.id = conversation_items.conversation_id)`

// lastItemSeq is the seq of the last item of the conversation given as
// its argument, 0 if none.
const lastItemSeq = `COALESCE((SELECT MAX(seq) FROM conversation_items WHERE conversation_id = ?), 0)`

const (
	// appendLease is how long an append's lease on its conversation
	// lasts unless renewed, and the longest another append waits for it.
	appendLease = 30 * time.Second
	// appendRenew is how often an append renews its lease.
	appendRenew = 10 * time.Second
	// appendPoll is how long an append waiting for the lease waits
	// before it asks again.
	appendPoll = 20 * time.Millisecond
)

// ErrConversationBusy: another append to the conversation held its lease
// for all the time a new append waits (appendLease), renewing it.
var ErrConversationBusy = errors.New("another append to the conversation is under way")

// errAppendLeaseLost: the append's lease ran out and another took the
// conversation over, removing what the append wrote.
var errAppendLeaseLost = errors.New("the append's lease on the conversation was lost")

// AddConversationItems appends items after those the conversation holds:
// it takes the conversation's lease (takeAppendLease) and renews it every
// appendRenew while it removes what a crashed append left unshown and
// writes the items in groups (writeItemGroups, each fenced by the lease)
// unseen past shown_seq, then shows them all and gives the lease back
// with one small update. An append that fails removes what it wrote and
// gives the lease back.
func (r records) AddConversationItems(ctx context.Context, owner, id string, items []ResponseItem) error {
	token := NewID("")
	if err := r.takeAppendLease(ctx, owner, id, token); err != nil {
		return err
	}
	wctx, cancel := context.WithCancelCause(ctx)
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		// A renewal that fails otherwise is tried again at the next: the
		// lease outlasts two of them.
		RenewEvery(wctx, appendRenew, func() bool {
			err := r.renewAppend(wctx, id, token)
			if errors.Is(err, errAppendLeaseLost) {
				cancel(err)
			}
			return !errors.Is(err, errAppendLeaseLost)
		})
	}()
	err := r.removeUnshown(wctx, id, token)
	if err == nil {
		err = r.writeItemGroups(wctx, "conversation_items", "conversation_id", id, items, r.appendFence(id, token))
	}
	if err == nil {
		err = r.showAppend(wctx, id, token)
	}
	cancel(nil)
	<-renewed
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errAppendLeaseLost) || errors.Is(context.Cause(wctx), errAppendLeaseLost):
		// What was written is the append that took over's to remove.
		return fmt.Errorf("adding conversation items: %w", errAppendLeaseLost)
	}
	// What was written goes now, whatever ended the request.
	return errors.Join(err, r.endAppend(context.WithoutCancel(ctx), id, token))
}

// takeAppendLease takes owner's conversation id's lease for the append
// token, waiting (polling every appendPoll, while ctx lives) while
// another append holds it, for appendLease at most (by the store's
// clock): ErrConversationBusy then. A lease that has run out was left by
// an append that stopped: it is taken over (what that append wrote is the
// taker's to remove).
func (r records) takeAppendLease(ctx context.Context, owner, id, token string) error {
	deadline := LeaseEnd(appendLease)
	for {
		now := Now()
		res, err := r.db.ExecContext(ctx, r.db.q(`UPDATE conversations SET append_lease = ?, appending_until = ? WHERE `+liveConversation+` AND appending_until < ?`),
			token, LeaseEnd(appendLease), owner, id, now)
		if err != nil {
			return fmt.Errorf("adding conversation items: %w", err)
		}
		if n, err := affected(res); err != nil || n == 1 {
			return err
		}
		var until int64
		err = r.db.QueryRowContext(ctx, r.db.q(`SELECT appending_until FROM conversations WHERE `+liveConversation), owner, id).Scan(&until)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("adding conversation items: %w", err)
		}
		if until >= now && now > deadline {
			return fmt.Errorf("adding conversation items: %w", ErrConversationBusy)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the conversation's append under way: %w", context.Cause(ctx))
		case <-time.After(appendPoll):
		}
	}
}

// appendFence is the fence of the groups the append token writes to
// conversation id: they are written while it holds the lease.
func (r records) appendFence(id, token string) *itemFence {
	return &itemFence{query: r.db.q(`UPDATE conversations SET append_lease = append_lease WHERE id = ? AND append_lease = ?`), args: []any{id, token}, lost: errAppendLeaseLost}
}

// renewAppend extends the append token's lease on conversation id.
func (r records) renewAppend(ctx context.Context, id, token string) error {
	res, err := r.db.ExecContext(ctx, r.db.q(`UPDATE conversations SET appending_until = ? WHERE id = ? AND append_lease = ?`), LeaseEnd(appendLease), id, token)
	if err != nil {
		return fmt.Errorf("renewing a conversation append's lease: %w", err)
	}
	return noneIs(res, errAppendLeaseLost)
}

// showAppend shows the items the append token wrote to conversation id
// and gives its lease back.
func (r records) showAppend(ctx context.Context, id, token string) error {
	res, err := r.db.ExecContext(ctx, r.db.q(`UPDATE conversations SET shown_seq = `+lastItemSeq+`, append_lease = '', appending_until = 0 WHERE id = ? AND append_lease = ?`), id, id, token)
	if err != nil {
		return fmt.Errorf("showing the conversation's items: %w", err)
	}
	return noneIs(res, errAppendLeaseLost)
}

// removeUnshown removes the items of conversation id past its shown_seq
// while the append token holds its lease, itemGroup a statement (each its
// own transaction).
func (r records) removeUnshown(ctx context.Context, id, token string) error {
	query := r.db.q(`DELETE FROM conversation_items WHERE seq IN (SELECT i.seq FROM conversation_items i JOIN conversations c ON c.id = i.conversation_id
		WHERE c.id = ? AND c.append_lease = ? AND i.seq > c.shown_seq LIMIT ?)`)
	for {
		res, err := r.db.ExecContext(ctx, query, id, token, itemGroup)
		if err != nil {
			return fmt.Errorf("removing unshown conversation items: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n < itemGroup {
			return err // nil once a statement found less than a group
		}
	}
}

// endAppend removes what the append token wrote to conversation id and
// gives its lease back.
func (r records) endAppend(ctx context.Context, id, token string) error {
	if err := r.removeUnshown(ctx, id, token); err != nil {
		return err
	}
	if _, err := r.db.ExecContext(ctx, r.db.q(`UPDATE conversations SET append_lease = '', appending_until = 0 WHERE id = ? AND append_lease = ?`), id, token); err != nil {
		return fmt.Errorf("ending a conversation append: %w", err)
	}
	return nil
}

// removeAbandonedAppends takes over the leases that appends left behind
// (run out), removing what they wrote.
func (r records) removeAbandonedAppends(ctx context.Context) error {
	for {
		now := Now()
		rows, err := r.db.QueryContext(ctx, r.db.q(`SELECT id FROM conversations WHERE appending_until > 0 AND appending_until < ? LIMIT 100`), now)
		if err != nil {
			return fmt.Errorf("finding abandoned conversation appends: %w", err)
		}
		ids, err := scanAll(rows, func(rows *sql.Rows) (id string, err error) { return id, rows.Scan(&id) })
		if err != nil {
			return fmt.Errorf("finding abandoned conversation appends: %w", err)
		}
		for _, id := range ids {
			token := NewID("")
			res, err := r.db.ExecContext(ctx, r.db.q(`UPDATE conversations SET append_lease = ?, appending_until = ? WHERE id = ? AND appending_until > 0 AND appending_until < ?`),
				token, LeaseEnd(appendLease), id, now)
			if err != nil {
				return fmt.Errorf("taking over an abandoned conversation append: %w", err)
			}
			if err := noneIs(res, errAppendLeaseLost); errors.Is(err, errAppendLeaseLost) {
				continue // taken by an append meanwhile
			} else if err != nil {
				return err
			}
			if err := r.endAppend(ctx, id, token); err != nil {
				return err
			}
		}
		if len(ids) < 100 {
			return nil
		}
	}
}
