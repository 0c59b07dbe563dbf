package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"
)

// sqlStore is the Store over database/sql, the same code for every
// database; what differs is its dialect.
type sqlStore struct {
	db     *sql.DB
	d      dialect
	o      Options
	shard  int
	q      queries
	closed atomic.Bool
}

// queries are the store's statements, rebound for its dialect once.
type queries struct {
	insertInference, upsertInferenceDay    string
	insertToolCall, upsertToolCallDay      string
	burnAll, burnDaysFrom, burnDetails     string
	burnDay, burnUnpriced                  string
	recentInferences, recentToolCalls      string
	totalInferences, totalToolCalls        string
	firstInferenceFrom, firstToolCallFrom  string
	pageInferences, pageToolCalls          string
	pruneInferences, pruneToolCalls        string
	metaGet, metaPut                       string
	importGet, importCreate, importAdvance string
	schemaVersion                          string
}

const inferenceCols = `time_ms, session_id, iteration, model, route, input_tokens, output_tokens,
	cost_nanousd, unpriced, escalated, reason, stop_reason, duration_us, error`

const toolCallCols = `time_ms, session_id, call_id, name, status, answered_by, is_error, error,
	arguments, duration_us`

// sumTotals adds up day rows; CAST keeps every database's sum an integer.
const sumTotals = `CAST(sum(inferences) AS BIGINT), CAST(sum(escalated) AS BIGINT),
	CAST(sum(input_tokens) AS BIGINT), CAST(sum(output_tokens) AS BIGINT),
	CAST(sum(cost_nanousd) AS BIGINT), CAST(max(unpriced) AS BIGINT)`

// exportPage is how many records an export reads per query.
const exportPage = 1000

// pruneBatch is how many records Prune deletes per transaction.
const pruneBatch = 10_000

func newQueries(d dialect) queries {
	r := d.rebind
	return queries{
		insertInference: r(`INSERT INTO inferences (` + inferenceCols + `)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		upsertInferenceDay: r(`INSERT INTO inference_days (day, model, route, shard,
				inferences, escalated, input_tokens, output_tokens, cost_nanousd, unpriced)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (day, model, route, shard) DO UPDATE SET
				inferences = inference_days.inferences + excluded.inferences,
				escalated = inference_days.escalated + excluded.escalated,
				input_tokens = inference_days.input_tokens + excluded.input_tokens,
				output_tokens = inference_days.output_tokens + excluded.output_tokens,
				cost_nanousd = inference_days.cost_nanousd + excluded.cost_nanousd,
				unpriced = ` + d.maxFunc() + `(inference_days.unpriced, excluded.unpriced)`),
		insertToolCall: r(`INSERT INTO tool_calls (` + toolCallCols + `)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		upsertToolCallDay: r(`INSERT INTO tool_call_days (day, shard, tool_calls) VALUES (?, ?, ?)
			ON CONFLICT (day, shard) DO UPDATE SET
				tool_calls = tool_call_days.tool_calls + excluded.tool_calls`),

		burnAll: `SELECT model, route, ` + sumTotals + ` FROM inference_days GROUP BY model, route`,
		burnDaysFrom: r(`SELECT model, route, ` + sumTotals + ` FROM inference_days
			WHERE day >= ? GROUP BY model, route`),
		burnDetails: r(`SELECT model, route, CAST(count(*) AS BIGINT), CAST(sum(escalated) AS BIGINT),
				CAST(sum(input_tokens) AS BIGINT), CAST(sum(output_tokens) AS BIGINT),
				CAST(sum(cost_nanousd) AS BIGINT), CAST(max(unpriced) AS BIGINT)
			FROM inferences WHERE time_ms >= ? AND time_ms < ? GROUP BY model, route`),
		burnDay: r(`SELECT model, route, ` + sumTotals + ` FROM inference_days
			WHERE day = ? GROUP BY model, route`),
		burnUnpriced: r(`SELECT DISTINCT model, route FROM inferences
			WHERE time_ms >= ? AND time_ms < ? AND unpriced = 1`),

		recentInferences: r(`SELECT id, ` + inferenceCols + ` FROM inferences ORDER BY id DESC LIMIT ?`),
		recentToolCalls:  r(`SELECT id, ` + toolCallCols + ` FROM tool_calls ORDER BY id DESC LIMIT ?`),
		totalInferences:  `SELECT CAST(COALESCE(sum(inferences), 0) AS BIGINT) FROM inference_days`,
		totalToolCalls:   `SELECT CAST(COALESCE(sum(tool_calls), 0) AS BIGINT) FROM tool_call_days`,

		// id + 0 keeps SQLite from answering min(id) by walking the
		// whole table in id order until a row is in the window; the
		// time index finds the window instead.
		firstInferenceFrom: r(`SELECT min(id + 0) FROM inferences WHERE time_ms >= ?`),
		firstToolCallFrom:  r(`SELECT min(id + 0) FROM tool_calls WHERE time_ms >= ?`),
		pageInferences: r(`SELECT id, ` + inferenceCols + ` FROM inferences
			WHERE id > ? AND time_ms >= ? ORDER BY id LIMIT ?`),
		pageToolCalls: r(`SELECT id, ` + toolCallCols + ` FROM tool_calls
			WHERE id > ? AND time_ms >= ? ORDER BY id LIMIT ?`),

		pruneInferences: r(`DELETE FROM inferences WHERE id IN
			(SELECT id FROM inferences WHERE time_ms < ? ORDER BY time_ms LIMIT ?)`),
		pruneToolCalls: r(`DELETE FROM tool_calls WHERE id IN
			(SELECT id FROM tool_calls WHERE time_ms < ? ORDER BY time_ms LIMIT ?)`),

		metaGet: r(`SELECT value FROM kora_meta WHERE key = ?`),
		metaPut: r(`INSERT INTO kora_meta (key, value) VALUES (?, ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`),
		schemaVersion: `SELECT value FROM kora_meta WHERE key = 'schema_version'`,

		importGet: r(`SELECT offset_bytes, records, skipped FROM jsonl_imports WHERE source = ?`),
		importCreate: r(`INSERT INTO jsonl_imports (source, path, offset_bytes, records, skipped)
			VALUES (?, ?, 0, 0, 0) ON CONFLICT (source) DO NOTHING`),
		importAdvance: r(`UPDATE jsonl_imports SET path = ?, offset_bytes = ?,
				records = records + ?, skipped = skipped + ?
			WHERE source = ? AND offset_bytes = ?`),
	}
}

// newSQLStore wraps an opened database. o has its defaults filled in.
func newSQLStore(db *sql.DB, d dialect, o Options) *sqlStore {
	return &sqlStore{db: db, d: d, o: o, shard: rand.IntN(Shards), q: newQueries(d)}
}

// fail wraps a database error as the store's *Error. Errors that already
// are one keep their kind.
func (s *sqlStore) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var le *Error
	if errors.As(err, &le) {
		return err
	}
	kind := s.d.kind(err)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("the deadline passed while waiting for the database: %w", err)
	}
	return &Error{Kind: kind, Backend: s.d.name(), Op: op, Err: err}
}

// bound gives ctx the store's lock timeout when the caller set no
// deadline, so no call waits unboundedly for a lock or a server.
func (s *sqlStore) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.o.LockTimeout)
}

var errClosed = errors.New("store is closed")

// begin starts a call: the closed check, the deadline.
func (s *sqlStore) begin(ctx context.Context, op string) (context.Context, context.CancelFunc, error) {
	if s.closed.Load() {
		return nil, nil, &Error{Kind: KindUnavailable, Backend: s.d.name(), Op: op, Err: errClosed}
	}
	ctx, cancel := s.bound(ctx)
	return ctx, cancel, nil
}

// inTx runs fn in a write transaction and commits it.
func (s *sqlStore) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// inReadTx runs fn in a read-only transaction: one snapshot.
func (s *sqlStore) inReadTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

func (s *sqlStore) stamp() time.Time {
	return s.o.Now().UTC().Truncate(time.Millisecond)
}

func dayOf(ms int64) int64 {
	d := ms / dayMS
	if ms%dayMS < 0 {
		d--
	}
	return d
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func durationUS(ms float64) int64 {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return 0
	}
	return int64(math.Round(ms * 1000))
}

func (s *sqlStore) AppendInference(ctx context.Context, rec Inference) error {
	if rec.Time.IsZero() {
		rec.Time = s.stamp()
	}
	return s.append(ctx, "append inference", func(ctx context.Context, tx *sql.Tx, days *dayTotals) error {
		days.addInference(rec)
		return s.insertInference(ctx, tx, rec)
	})
}

func (s *sqlStore) AppendBatch(ctx context.Context, infs []Inference, calls []ToolCall) error {
	if len(infs) == 0 && len(calls) == 0 {
		return nil
	}
	now := s.stamp()
	return s.append(ctx, "append batch", func(ctx context.Context, tx *sql.Tx, days *dayTotals) error {
		for _, rec := range infs {
			if rec.Time.IsZero() {
				rec.Time = now
			}
			days.addInference(rec)
			if err := s.insertInference(ctx, tx, rec); err != nil {
				return err
			}
		}
		for _, rec := range calls {
			if rec.Time.IsZero() {
				rec.Time = now
			}
			days.addToolCall(rec)
			if err := s.insertToolCall(ctx, tx, rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// append runs insert and adds what it recorded to the day totals, in one
// transaction: a record and its totals are committed together or not at
// all.
func (s *sqlStore) append(ctx context.Context, op string, insert func(context.Context, *sql.Tx, *dayTotals) error) error {
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return err
	}
	defer cancel()
	return s.fail(op, s.inTx(ctx, func(tx *sql.Tx) error {
		var days dayTotals
		if err := insert(ctx, tx, &days); err != nil {
			return err
		}
		return s.upsertDays(ctx, tx, &days)
	}))
}

func (s *sqlStore) insertInference(ctx context.Context, tx *sql.Tx, rec Inference) error {
	_, err := tx.ExecContext(ctx, s.q.insertInference,
		rec.Time.UnixMilli(), rec.SessionID, rec.Iteration, rec.Model, rec.Route,
		rec.InputTokens, rec.OutputTokens, NanoUSD(rec.CostUSD), boolInt(rec.Unpriced),
		boolInt(rec.Escalated), rec.Reason, rec.StopReason, durationUS(rec.DurationMS), rec.Error)
	return err
}

func (s *sqlStore) AppendToolCall(ctx context.Context, rec ToolCall) error {
	if rec.Time.IsZero() {
		rec.Time = s.stamp()
	}
	return s.append(ctx, "append tool call", func(ctx context.Context, tx *sql.Tx, days *dayTotals) error {
		days.addToolCall(rec)
		return s.insertToolCall(ctx, tx, rec)
	})
}

func (s *sqlStore) insertToolCall(ctx context.Context, tx *sql.Tx, rec ToolCall) error {
	_, err := tx.ExecContext(ctx, s.q.insertToolCall,
		rec.Time.UnixMilli(), rec.SessionID, rec.CallID, rec.Name, rec.Status, rec.AnsweredBy,
		boolInt(rec.IsError), rec.Error, string(rec.Arguments), durationUS(rec.DurationMS))
	return err
}

// dayTotals gathers the totals a set of records adds to the day tables,
// so that a batch of records costs one upsert per day, model and route.
type dayTotals struct {
	inferences map[dayKey]*dayRow
	toolCalls  map[int64]int64
}

type dayKey struct {
	day          int64
	model, route string
}

type dayRow struct {
	Totals
	unpriced bool
}

func (t *dayTotals) addInference(rec Inference) {
	if t.inferences == nil {
		t.inferences = map[dayKey]*dayRow{}
	}
	k := dayKey{dayOf(rec.Time.UnixMilli()), rec.Model, rec.Route}
	r := t.inferences[k]
	if r == nil {
		r = &dayRow{}
		t.inferences[k] = r
	}
	r.Inferences++
	r.Escalated += boolInt(rec.Escalated)
	r.InputTokens += int64(rec.InputTokens)
	r.OutputTokens += int64(rec.OutputTokens)
	r.CostNanoUSD += NanoUSD(rec.CostUSD)
	r.unpriced = r.unpriced || rec.Unpriced
}

func (t *dayTotals) addToolCall(rec ToolCall) {
	if t.toolCalls == nil {
		t.toolCalls = map[int64]int64{}
	}
	t.toolCalls[dayOf(rec.Time.UnixMilli())]++
}

func (s *sqlStore) upsertDays(ctx context.Context, tx *sql.Tx, t *dayTotals) error {
	for k, r := range t.inferences {
		if _, err := tx.ExecContext(ctx, s.q.upsertInferenceDay, k.day, k.model, k.route, s.shard,
			r.Inferences, r.Escalated, r.InputTokens, r.OutputTokens, r.CostNanoUSD, boolInt(r.unpriced)); err != nil {
			return err
		}
	}
	for day, n := range t.toolCalls {
		if _, err := tx.ExecContext(ctx, s.q.upsertToolCallDay, day, s.shard, n); err != nil {
			return err
		}
	}
	return nil
}

func (s *sqlStore) Burn(ctx context.Context, since time.Time) ([]BurnGroup, error) {
	const op = "burn"
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	defer cancel()
	groups := burnGroups{}
	err = s.inReadTx(ctx, func(tx *sql.Tx) error {
		if since.IsZero() {
			return groups.add(tx.QueryContext(ctx, s.q.burnAll))
		}
		from := since.UnixMilli()
		day := dayOf(from)
		fullDays := day
		if from != day*dayMS {
			// The start day counts only from since, the whole days after
			// it come from the totals.
			fullDays = day + 1
			part, err := s.burnPartialDay(ctx, tx, day, from)
			if err != nil {
				return err
			}
			groups.merge(part)
		}
		return groups.add(tx.QueryContext(ctx, s.q.burnDaysFrom, fullDays))
	})
	if err != nil {
		return nil, s.fail(op, err)
	}
	out := make([]BurnGroup, 0, len(groups))
	for _, g := range groups {
		if g.Inferences != 0 {
			out = append(out, *g)
		}
	}
	sortBurn(out)
	return out, nil
}

// burnPartialDay totals the inferences of day from the instant from on.
// It reads whichever part of the day's details is smaller: those after
// from, or (the day's totals minus) those before from. So a window that
// starts at any time of day reads at most half a day of details.
func (s *sqlStore) burnPartialDay(ctx context.Context, tx *sql.Tx, day, from int64) (burnGroups, error) {
	start, end := day*dayMS, (day+1)*dayMS
	part := burnGroups{}
	if end-from <= from-start {
		return part, part.add(tx.QueryContext(ctx, s.q.burnDetails, from, end))
	}
	if err := part.add(tx.QueryContext(ctx, s.q.burnDay, day)); err != nil {
		return nil, err
	}
	before := burnGroups{}
	if err := before.add(tx.QueryContext(ctx, s.q.burnDetails, start, from)); err != nil {
		return nil, err
	}
	part.sub(before)
	// A flag does not subtract: where the day had unpriced calls, ask
	// whether any of them fell after from.
	unpriced := false
	for _, g := range part {
		unpriced = unpriced || g.Unpriced
		g.Unpriced = false
	}
	if unpriced {
		rows, err := tx.QueryContext(ctx, s.q.burnUnpriced, from, end)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var k [2]string
			if err := rows.Scan(&k[0], &k[1]); err != nil {
				return nil, err
			}
			if g := part[k]; g != nil {
				g.Unpriced = true
			}
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return part, nil
}

// burnGroups accumulates burn rows by model and route.
type burnGroups map[[2]string]*BurnGroup

func (gs burnGroups) get(model, route string) *BurnGroup {
	k := [2]string{model, route}
	g := gs[k]
	if g == nil {
		g = &BurnGroup{Model: model, Route: route}
		gs[k] = g
	}
	return g
}

// add sums rows of (model, route, inferences, escalated, input, output,
// cost, unpriced) into gs.
func (gs burnGroups) add(rows *sql.Rows, err error) error {
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r BurnGroup
		var unpriced int64
		if err := rows.Scan(&r.Model, &r.Route, &r.Inferences, &r.Escalated, &r.InputTokens,
			&r.OutputTokens, &r.CostNanoUSD, &unpriced); err != nil {
			return err
		}
		r.Unpriced = unpriced != 0
		gs.get(r.Model, r.Route).plus(r, 1)
	}
	return rows.Err()
}

func (gs burnGroups) merge(o burnGroups) {
	for _, r := range o {
		if r.Inferences != 0 {
			gs.get(r.Model, r.Route).plus(*r, 1)
		}
	}
}

func (gs burnGroups) sub(o burnGroups) {
	for _, r := range o {
		gs.get(r.Model, r.Route).plus(BurnGroup{Totals: r.Totals}, -1)
	}
}

func (g *BurnGroup) plus(r BurnGroup, sign int64) {
	g.Inferences += sign * r.Inferences
	g.Escalated += sign * r.Escalated
	g.InputTokens += sign * r.InputTokens
	g.OutputTokens += sign * r.OutputTokens
	g.CostNanoUSD += sign * r.CostNanoUSD
	g.Unpriced = g.Unpriced || r.Unpriced
}

// sortBurn orders groups by cost, then by name, so reports are stable.
func sortBurn(gs []BurnGroup) {
	less := func(a, b BurnGroup) bool {
		if a.CostNanoUSD != b.CostNanoUSD {
			return a.CostNanoUSD > b.CostNanoUSD
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		return a.Route < b.Route
	}
	for i := 1; i < len(gs); i++ {
		for j := i; j > 0 && less(gs[j], gs[j-1]); j-- {
			gs[j], gs[j-1] = gs[j-1], gs[j]
		}
	}
}

func (s *sqlStore) RecentInferences(ctx context.Context, limit int) ([]Inference, int64, error) {
	return recent(ctx, s, "recent inferences", s.q.totalInferences, s.q.recentInferences, limit, scanInferences)
}

func (s *sqlStore) RecentToolCalls(ctx context.Context, limit int) ([]ToolCall, int64, error) {
	return recent(ctx, s, "recent tool calls", s.q.totalToolCalls, s.q.recentToolCalls, limit, scanToolCalls)
}

// recent reads the total of a stream and its newest limit records in one
// snapshot.
func recent[T any](ctx context.Context, s *sqlStore, op, totalQuery, newestQuery string, limit int,
	scan func(*sql.Rows, int) ([]T, int64, error)) ([]T, int64, error) {
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return nil, 0, err
	}
	defer cancel()
	var recs []T
	var total int64
	err = s.inReadTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, totalQuery).Scan(&total); err != nil {
			return err
		}
		if limit <= 0 {
			return nil
		}
		rows, err := tx.QueryContext(ctx, newestQuery, limit)
		if err != nil {
			return err
		}
		recs, _, err = scan(rows, limit)
		return err
	})
	if err != nil {
		return nil, 0, s.fail(op, err)
	}
	return recs, total, nil
}

// scanInferences reads rows of id + inferenceCols, returning the last id.
func scanInferences(rows *sql.Rows, capHint int) ([]Inference, int64, error) {
	defer rows.Close()
	out := make([]Inference, 0, min(capHint, exportPage))
	var last int64
	for rows.Next() {
		var r Inference
		var ms, cost, unpriced, escalated, durUS int64
		if err := rows.Scan(&last, &ms, &r.SessionID, &r.Iteration, &r.Model, &r.Route,
			&r.InputTokens, &r.OutputTokens, &cost, &unpriced, &escalated, &r.Reason,
			&r.StopReason, &durUS, &r.Error); err != nil {
			return nil, 0, err
		}
		r.Time = time.UnixMilli(ms).UTC()
		r.CostUSD = USD(cost)
		r.Unpriced = unpriced != 0
		r.Escalated = escalated != 0
		r.DurationMS = float64(durUS) / 1000
		out = append(out, r)
	}
	return out, last, rows.Err()
}

// scanToolCalls reads rows of id + toolCallCols, returning the last id.
func scanToolCalls(rows *sql.Rows, capHint int) ([]ToolCall, int64, error) {
	defer rows.Close()
	out := make([]ToolCall, 0, min(capHint, exportPage))
	var last int64
	for rows.Next() {
		var r ToolCall
		var ms, isErr, durUS int64
		var args string
		if err := rows.Scan(&last, &ms, &r.SessionID, &r.CallID, &r.Name, &r.Status,
			&r.AnsweredBy, &isErr, &r.Error, &args, &durUS); err != nil {
			return nil, 0, err
		}
		r.Time = time.UnixMilli(ms).UTC()
		r.IsError = isErr != 0
		if args != "" {
			r.Arguments = json.RawMessage(args)
		}
		r.DurationMS = float64(durUS) / 1000
		out = append(out, r)
	}
	return out, last, rows.Err()
}

// export pages through a table by id from the first record at or after
// since. Each page is its own short query, and fn runs between queries,
// so a slow consumer holds no transaction and memory is one page.
func (s *sqlStore) export(ctx context.Context, op, first string, since time.Time,
	page func(ctx context.Context, after, from int64) (n int, last int64, err error)) error {
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return err
	}
	defer cancel()
	from := int64(math.MinInt64)
	after := int64(0)
	if !since.IsZero() {
		from = since.UnixMilli()
		// Ids follow commit order, not record time (an import or a
		// caller's own time can be older), so start at the smallest id
		// of any record in the window and filter by time from there.
		var id sql.NullInt64
		if err := s.db.QueryRowContext(ctx, first, from).Scan(&id); err != nil {
			return s.fail(op, err)
		}
		if !id.Valid {
			return nil
		}
		after = id.Int64 - 1
	}
	for {
		n, last, err := page(ctx, after, from)
		if err != nil {
			return err
		}
		if n < exportPage {
			return nil
		}
		after = last
	}
}

// errConsumer marks an error of the caller's fn, returned as is.
type errConsumer struct{ err error }

func (e errConsumer) Error() string { return e.err.Error() }

func (s *sqlStore) ExportInferences(ctx context.Context, since time.Time, fn func(Inference) error) error {
	return exportStream(ctx, s, "export inferences", s.q.firstInferenceFrom, s.q.pageInferences, since, scanInferences, fn)
}

func (s *sqlStore) ExportToolCalls(ctx context.Context, since time.Time, fn func(ToolCall) error) error {
	return exportStream(ctx, s, "export tool calls", s.q.firstToolCallFrom, s.q.pageToolCalls, since, scanToolCalls, fn)
}

// exportStream hands fn the records pageQuery reads, page by page.
func exportStream[T any](ctx context.Context, s *sqlStore, op, firstQuery, pageQuery string, since time.Time,
	scan func(*sql.Rows, int) ([]T, int64, error), fn func(T) error) error {
	return s.export(ctx, op, firstQuery, since, func(ctx context.Context, after, from int64) (int, int64, error) {
		rows, err := s.db.QueryContext(ctx, pageQuery, after, from, exportPage)
		if err != nil {
			return 0, 0, s.fail(op, err)
		}
		recs, last, err := scan(rows, exportPage)
		if err != nil {
			return 0, 0, s.fail(op, err)
		}
		for _, r := range recs {
			if err := fn(r); err != nil {
				return 0, 0, err
			}
		}
		return len(recs), last, nil
	})
}

func (s *sqlStore) Describe() string { return s.d.describe() }

func (s *sqlStore) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if err := s.db.Close(); err != nil {
		return s.fail("close", err)
	}
	return nil
}

// migrate brings the schema to SchemaVersion: creates it in a new
// database, runs the steps after an older version, refuses a newer one.
// A database already at SchemaVersion is only read, so a read-only
// database still opens for reports.
func (s *sqlStore) migrate(ctx context.Context) error {
	const op = "migrate schema"
	if v, err := s.readSchemaVersion(ctx, s.db); err == nil && v == SchemaVersion {
		return nil
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.d.exclude(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS kora_meta (
			key TEXT PRIMARY KEY, value TEXT NOT NULL)`); err != nil {
			return err
		}
		v, err := s.readSchemaVersion(ctx, tx)
		switch {
		case err != nil:
			return err
		case v > SchemaVersion:
			return &Error{Kind: KindSchema, Backend: s.d.name(), Op: op,
				Err: fmt.Errorf("the database has schema version %d, written by a newer Kora; this one knows up to %d", v, SchemaVersion)}
		case v == 0:
			for _, stmt := range splitStatements(s.d.schema()) {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return err
				}
			}
		default:
			for _, step := range migrations {
				if step.to <= v {
					continue
				}
				for _, stmt := range step.statements(s.d) {
					if _, err := tx.ExecContext(ctx, stmt); err != nil {
						return fmt.Errorf("step to version %d: %w", step.to, err)
					}
				}
			}
		}
		_, err = tx.ExecContext(ctx, s.q.metaPut, "schema_version", fmt.Sprint(SchemaVersion))
		return err
	})
	return s.fail(op, err)
}

// migration is one step of the schema, from version to-1 to version to.
type migration struct {
	to         int
	statements func(d dialect) []string
}

// migrations are the steps after version 1, in order. The next change to
// the schema adds {to: 2, ...} here and to the DDL of a new database.
var migrations = []migration{}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readSchemaVersion returns the recorded version, 0 when none is.
func (s *sqlStore) readSchemaVersion(ctx context.Context, q querier) (int, error) {
	var text string
	err := q.QueryRowContext(ctx, s.q.schemaVersion).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var v int
	if _, err := fmt.Sscan(text, &v); err != nil || v <= 0 {
		return 0, &Error{Kind: KindCorrupt, Backend: s.d.name(), Op: "migrate schema",
			Err: fmt.Errorf("kora_meta schema_version is %q, not a version", text)}
	}
	return v, nil
}

// splitStatements cuts DDL at semicolons; the schema has none inside
// statements.
func splitStatements(ddl string) []string {
	var out []string
	for _, s := range strings.Split(ddl, ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
