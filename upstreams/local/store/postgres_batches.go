package store

import (
	"context"
	"database/sql"
	"fmt"
)

// WriteBatchGroup on PostgreSQL is one statement, so no transaction stays
// open between its writes (a holder paused there would keep the batch's
// row locked against claims and cancels) and a group costs one round
// trip and one commit. The lease's row is locked first, for the statement
// only: groups of one batch take turns on it, none is written once
// another worker has claimed the batch (no row back: the lease is lost),
// and a start either commits before a cancel or sees it. The outcomes'
// rows are found by the primary key (line = ANY) and each takes its
// values from the arrays at its line's position: no join, so no plan
// reads more rows than the group's (joined with the unnested outcomes,
// a plan could read every row of the batch per group, or unnest the
// outcomes once per row).
func (s *Postgres) WriteBatchGroup(ctx context.Context, l Lease, outs []BatchOutcome, start []int) (map[int]int, error) {
	rows, err := s.db.QueryContext(ctx, groupWrite, groupWriteArgs(l, outs, start)...)
	if err != nil {
		return nil, fmt.Errorf("writing a group of batch requests: %w", err)
	}
	defer rows.Close()
	var status string
	started := make(map[int]int, len(start))
	for rows.Next() {
		var line, attempts sql.NullInt64
		if err := rows.Scan(&status, &line, &attempts); err != nil {
			return nil, fmt.Errorf("writing a group of batch requests: %w", err)
		}
		if line.Valid {
			started[int(line.Int64)] = int(attempts.Int64)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("writing a group of batch requests: %w", err)
	}
	switch {
	case status == "":
		return nil, ErrLeaseLost
	case status != StatusInProgress:
		return nil, ErrConflict
	}
	return started, nil
}

// groupWrite is WriteBatchGroup's statement; its arguments are
// groupWriteArgs.
const groupWrite = `WITH lease AS (
			SELECT id, status FROM batches WHERE id = $1 AND lease_owner = $2 FOR NO KEY UPDATE
		), done AS (
			UPDATE batch_requests r SET result = ($4::text[])[array_position($3::bigint[], r.line::bigint)],
				failed = ($5::boolean[])[array_position($3::bigint[], r.line::bigint)]
			WHERE r.batch_id = (SELECT id FROM lease) AND r.line = ANY($3::bigint[]) AND r.result IS NULL
			RETURNING r.failed, ($6::bigint[])[array_position($3::bigint[], r.line::bigint)] AS input,
				($7::bigint[])[array_position($3::bigint[], r.line::bigint)] AS output,
				octet_length(r.result) + 1 AS size
		), started AS (
			UPDATE batch_requests SET attempts = attempts + 1
			WHERE batch_id = (SELECT id FROM lease WHERE status = '` + StatusInProgress + `') AND line = ANY($8::bigint[]) AND result IS NULL
			RETURNING line, attempts
		), counted AS (
			UPDATE batches SET completed = completed + (SELECT COUNT(*) FROM done WHERE NOT failed),
				failed = failed + (SELECT COUNT(*) FROM done WHERE failed),
				input_tokens = input_tokens + (SELECT COALESCE(SUM(input), 0) FROM done),
				output_tokens = output_tokens + (SELECT COALESCE(SUM(output), 0) FROM done),
				result_bytes = result_bytes + (SELECT COALESCE(SUM(size), 0) FROM done)
			WHERE id = (SELECT id FROM lease) RETURNING status
		)
		SELECT c.status, s.line, s.attempts FROM counted c LEFT JOIN started s ON true`

// groupWriteArgs binds a group: the lease, the outcomes by column, the
// lines to start.
func groupWriteArgs(l Lease, outs []BatchOutcome, start []int) []any {
	lines := make([]int64, len(outs))
	results := make([]string, len(outs))
	failed := make([]bool, len(outs))
	input := make([]int64, len(outs))
	output := make([]int64, len(outs))
	for i, o := range outs {
		lines[i], results[i], failed[i], input[i], output[i] = int64(o.Line), string(o.Result), o.Failed, o.InputTokens, o.OutputTokens
	}
	starts := make([]int64, len(start))
	for i, line := range start {
		starts[i] = int64(line)
	}
	return []any{l.Batch, l.Token, lines, results, failed, input, output, starts}
}
