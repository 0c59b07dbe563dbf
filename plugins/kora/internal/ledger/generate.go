package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// GeneratorVersion changes whenever Generate writes different data for the
// same options, so that ledgers cached by benchmarks are made again.
const GeneratorVersion = 1

// GenerateOptions describes a synthetic ledger: a year of traffic ending
// at Now, for benchmarks that need a ledger of realistic size without
// recording it one append at a time.
type GenerateOptions struct {
	// DSN and StateDir name the database as in Options. Only SQLite is
	// generated directly.
	DSN      string
	StateDir string
	// Inferences is how many inferences to write; ToolCalls how many tool
	// calls (negative: Inferences/2).
	Inferences int
	ToolCalls  int
	// Seed makes the data reproducible: the same seed, sizes and Now give
	// the same records.
	Seed uint64
	// Now is the end of the year of traffic; zero means time.Now.
	Now time.Time
}

// GenerateStats says what Generate wrote and how long it took.
type GenerateStats struct {
	Inferences    int64
	ToolCalls     int64
	InferenceDays int // rows of inference_days
	ToolCallDays  int // rows of tool_call_days
	Elapsed       time.Duration
}

// GenerateSpan is how much history Generate spreads its records over.
const GenerateSpan = 365 * 24 * time.Hour

// genModel is a model of the synthetic traffic, with its price in
// nano-dollars per token (USD per million tokens × 1000). Unpriced models
// cost nothing and are marked so.
type genModel struct {
	name            string
	in, out         int64
	unpriced        bool
	weight          float64 // share of the non-escalated calls
	inMedian, outMd float64 // median tokens in and out
}

// genModels are the models of the synthetic traffic; the last is where
// escalations go.
var genModels = []genModel{
	{name: "claude-sonnet-4-5", in: 3000, out: 15000, weight: 0.32, inMedian: 2400, outMd: 380},
	{name: "claude-haiku-4-5", in: 1000, out: 5000, weight: 0.30, inMedian: 1600, outMd: 260},
	{name: "gpt-4.1-mini", in: 400, out: 1600, weight: 0.20, inMedian: 1400, outMd: 220},
	{name: "gemini-2.5-flash", in: 300, out: 2500, weight: 0.13, inMedian: 1800, outMd: 300},
	{name: "llama-3.3-70b-local", unpriced: true, weight: 0.05, inMedian: 1200, outMd: 200},
	{name: "claude-opus-4-1", in: 15000, out: 75000, inMedian: 3200, outMd: 520},
}

// genTools are the tools of the synthetic audit, with their share of the
// calls and the arguments they are called with.
var genTools = []struct {
	name, status, answeredBy, args string
	weight                         float64
}{
	{"read_file", "ok", "native", `{"path":"/srv/app/config.yaml"}`, 0.30},
	{"web_search", "ok", "native", `{"query":"postgres replication lag alert"}`, 0.20},
	{"now", "ok", "native", `{}`, 0.15},
	{"kora__get_burn", "provided_by:kora", "kora", `{"window":"today"}`, 0.12},
	{"kora__get_budget", "provided_by:kora", "kora", `{}`, 0.08},
	{"kora__recent_inferences", "provided_by:kora", "kora", `{"limit":20}`, 0.07},
	{"shell", "blocked", "blocked", `{"cmd":"rm -rf /var/log/app"}`, 0.08},
}

// genInference is one synthetic inference in the database's units.
type genInference struct {
	timeMS       int64
	session      string
	iteration    int
	model        *genModel
	route        string
	inTok, outTk int64
	costNano     int64
	escalated    bool
	reason       string
	stopReason   string
	durationUS   int64
	err          string
	shard        int
}

// genToolCall is one synthetic tool call in the database's units.
type genToolCall struct {
	timeMS     int64
	session    string
	callID     string
	name       string
	status     string
	answeredBy string
	isError    bool
	err        string
	args       string
	durationUS int64
	shard      int
}

// generator produces the records of one synthetic ledger in time order.
// Every record's fields come from one random stream, so the data depends
// only on the seed, the sizes and the end time.
type generator struct {
	rng        *rand.Rand
	n, calls   int
	start, now int64 // ms
	stepMS     float64

	session   string
	iteration int
	left      int // inferences left in the session
	shard     int
	callSeq   int
}

func newGenerator(o GenerateOptions) *generator {
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	calls := o.ToolCalls
	if calls < 0 {
		calls = o.Inferences / 2
	}
	end := now.UTC().UnixMilli()
	g := &generator{
		rng:   rand.New(rand.NewPCG(o.Seed, 0x6b6f7261)),
		n:     o.Inferences,
		calls: calls,
		start: end - GenerateSpan.Milliseconds(),
		now:   end,
	}
	if g.n > 0 {
		g.stepMS = float64(GenerateSpan.Milliseconds()) / float64(g.n)
	}
	return g
}

// records calls inf for every inference in time order and call for every
// tool call, each tool call right after the inference that asked for it:
// calls are spread evenly over the inferences.
func (g *generator) records(inf func(*genInference) error, call func(*genToolCall) error) error {
	var rec genInference
	var tc genToolCall
	emitted := 0
	for i := 0; i < g.n; i++ {
		g.inference(i, &rec)
		if err := inf(&rec); err != nil {
			return err
		}
		// The tool calls due after inference i, so that exactly g.calls
		// are made, spread evenly.
		due := int((int64(i) + 1) * int64(g.calls) / int64(g.n))
		for ; emitted < due; emitted++ {
			g.toolCall(&rec, &tc)
			if err := call(&tc); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *generator) inference(i int, rec *genInference) {
	r := g.rng
	if g.left == 0 {
		g.session = fmt.Sprintf("bench-%016x", r.Uint64())
		g.iteration = 0
		g.left = 1 + r.IntN(24)
		// A session is one Kora process, which picks its shard when it
		// opens the store.
		g.shard = r.IntN(Shards)
	}
	g.left--
	g.iteration++

	t := g.start + int64((float64(i)+r.Float64())*g.stepMS)
	if t > g.now {
		t = g.now
	}
	*rec = genInference{timeMS: t, session: g.session, iteration: g.iteration, shard: g.shard, route: "gateway"}
	if r.IntN(5) == 0 {
		rec.route = "bypass"
	}
	if r.IntN(20) == 0 {
		rec.model = &genModels[len(genModels)-1]
		rec.escalated = true
		rec.reason = "small model hedged: \"I'm not sure\""
	} else {
		x := r.Float64()
		rec.model = &genModels[0]
		for k := range genModels[:len(genModels)-1] {
			if x < genModels[k].weight {
				rec.model = &genModels[k]
				break
			}
			x -= genModels[k].weight
		}
	}
	m := rec.model
	rec.inTok = logNormal(r, m.inMedian, 0.9, 20, 200_000)
	rec.outTk = logNormal(r, m.outMd, 0.8, 1, 8192)
	switch x := r.IntN(100); {
	case x < 60:
		rec.stopReason = "end_turn"
	case x < 97:
		rec.stopReason = "tool_use"
	default:
		rec.stopReason = "max_tokens"
	}
	if r.IntN(300) == 0 {
		rec.err = "upstream: 529 overloaded"
		rec.outTk = 0
		rec.stopReason = ""
	}
	rec.costNano = rec.inTok*m.in + rec.outTk*m.out
	rec.durationUS = 300_000 + rec.outTk*12_000 + r.Int64N(400_000)
}

func (g *generator) toolCall(after *genInference, tc *genToolCall) {
	r := g.rng
	x := r.Float64()
	k := 0
	for k < len(genTools)-1 && x >= genTools[k].weight {
		x -= genTools[k].weight
		k++
	}
	tool := genTools[k]
	g.callSeq++
	t := after.timeMS + after.durationUS/1000 + r.Int64N(50)
	if t > g.now {
		t = g.now
	}
	*tc = genToolCall{
		timeMS: t, session: after.session, callID: fmt.Sprintf("call_%08d", g.callSeq),
		name: tool.name, status: tool.status, answeredBy: tool.answeredBy, args: tool.args,
		durationUS: 200 + r.Int64N(20_000), shard: after.shard,
	}
	switch {
	case tool.status == "blocked":
		tc.isError, tc.err = true, "blocked by policy"
	case tool.answeredBy == "native" && r.IntN(50) == 0:
		tc.status, tc.isError, tc.err = "error", true, "deadline exceeded"
	}
	if tool.answeredBy == "native" {
		tc.durationUS += r.Int64N(800_000)
	}
}

// logNormal draws a token count around median, clamped to [lo, hi].
func logNormal(r *rand.Rand, median, sigma float64, lo, hi int64) int64 {
	v := int64(median * math.Exp(sigma*r.NormFloat64()))
	return min(max(v, lo), hi)
}

// GeneratedInferences yields the inferences Generate writes for o, in time
// order, as the records the JSONL ledger of earlier versions held; a
// baseline on JSONL uses it to write the same data. The tool calls are
// drawn too (the data depends on them) but not yielded.
func GeneratedInferences(o GenerateOptions) iter.Seq[Inference] {
	return func(yield func(Inference) bool) {
		stop := errors.New("stop")
		g := newGenerator(o)
		g.records(func(r *genInference) error {
			if !yield(Inference{
				Time: time.UnixMilli(r.timeMS).UTC(), SessionID: r.session, Iteration: r.iteration,
				Model: r.model.name, Route: r.route, InputTokens: int(r.inTok), OutputTokens: int(r.outTk),
				CostUSD: USD(r.costNano), Unpriced: r.model.unpriced, Escalated: r.escalated,
				Reason: r.reason, StopReason: r.stopReason, DurationMS: float64(r.durationUS) / 1000, Error: r.err,
			}) {
				return stop
			}
			return nil
		}, func(*genToolCall) error { return nil })
	}
}

// GeneratedToolCalls yields the tool calls Generate writes for o, in the
// order written, as GeneratedInferences does for inferences.
func GeneratedToolCalls(o GenerateOptions) iter.Seq[ToolCall] {
	return func(yield func(ToolCall) bool) {
		stop := errors.New("stop")
		g := newGenerator(o)
		g.records(func(*genInference) error { return nil }, func(c *genToolCall) error {
			if !yield(ToolCall{
				Time: time.UnixMilli(c.timeMS).UTC(), SessionID: c.session, CallID: c.callID, Name: c.name,
				Status: c.status, AnsweredBy: c.answeredBy, IsError: c.isError, Error: c.err,
				Arguments: json.RawMessage(c.args), DurationMS: float64(c.durationUS) / 1000,
			}) {
				return stop
			}
			return nil
		})
	}
}

// genDayKey is one row of inference_days.
type genDayKey struct {
	day          int64
	model, route string
	shard        int
}

type genToolDayKey struct {
	day   int64
	shard int
}

// genBatch is how many rows one INSERT statement carries: 14 columns of
// 512 rows stay under SQLite's limit of 32766 parameters.
const genBatch = 512

// genCommitEvery is how many rows one transaction carries, so that the
// journal of a failed run stays small and progress is steady.
const genCommitEvery = 500_000

// Generate fills an empty ledger with o.Inferences inferences and
// o.ToolCalls tool calls spread evenly over the year ending at o.Now,
// written straight into the database in large transactions (not through
// Store's appends), with the daily totals computed from the same records
// so that they match the details exactly. The schema is created first as
// Open creates it. It refuses a ledger that already holds records.
//
// It is for benchmarks: durability is off while it writes, so a crash
// half-way leaves a database to throw away.
func Generate(ctx context.Context, o GenerateOptions) (GenerateStats, error) {
	began := time.Now()
	var st GenerateStats
	path, err := sqlitePathOf(o)
	if err != nil {
		return st, err
	}
	fail := func(op string, err error) (GenerateStats, error) {
		return st, fmt.Errorf("kora: ledger (sqlite): generate %s: %s: %w", path, op, err)
	}
	if err := createSchema(ctx, path); err != nil {
		return fail("create schema", err)
	}
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return fail("open", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return fail("open", err)
	}
	defer conn.Close()

	var existing int64
	if err := conn.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM inferences) + (SELECT count(*) FROM tool_calls)`).Scan(&existing); err != nil {
		return fail("count records", err)
	}
	if existing > 0 {
		return fail("check empty", fmt.Errorf("the ledger already holds %d records", existing))
	}
	// A throwaway database while it is written: no fsync, a rollback
	// journal (a fresh file's journal stays small), a large page cache
	// for the index builds. WAL comes back before the store sees it.
	for _, p := range []string{
		`PRAGMA journal_mode=DELETE`, `PRAGMA synchronous=OFF`, `PRAGMA cache_size=-262144`, `PRAGMA temp_store=MEMORY`,
		`DROP INDEX IF EXISTS inferences_time`, `DROP INDEX IF EXISTS tool_calls_time`,
	} {
		if _, err := conn.ExecContext(ctx, p); err != nil {
			return fail(p, err)
		}
	}

	w := &genWriter{ctx: ctx, conn: conn}
	infRows := newRowBatch(w, "inferences", "time_ms, session_id, iteration, model, route, input_tokens, output_tokens, cost_nanousd, unpriced, escalated, reason, stop_reason, duration_us, error", 14)
	callRows := newRowBatch(w, "tool_calls", "time_ms, session_id, call_id, name, status, answered_by, is_error, error, arguments, duration_us", 10)
	days := map[genDayKey]*Totals{}
	unpriced := map[genDayKey]bool{}
	toolDays := map[genToolDayKey]int64{}

	g := newGenerator(o)
	err = g.records(func(r *genInference) error {
		k := genDayKey{r.timeMS / dayMS, r.model.name, r.route, r.shard}
		t := days[k]
		if t == nil {
			t = &Totals{}
			days[k] = t
		}
		t.Inferences++
		t.InputTokens += r.inTok
		t.OutputTokens += r.outTk
		t.CostNanoUSD += r.costNano
		if r.escalated {
			t.Escalated++
		}
		if r.model.unpriced {
			unpriced[k] = true
		}
		st.Inferences++
		return infRows.add(r.timeMS, r.session, r.iteration, r.model.name, r.route, r.inTok, r.outTk, r.costNano,
			boolInt(r.model.unpriced), boolInt(r.escalated), r.reason, r.stopReason, r.durationUS, r.err)
	}, func(c *genToolCall) error {
		toolDays[genToolDayKey{c.timeMS / dayMS, c.shard}]++
		st.ToolCalls++
		return callRows.add(c.timeMS, c.session, c.callID, c.name, c.status, c.answeredBy, boolInt(c.isError), c.err, c.args, c.durationUS)
	})
	if err == nil {
		err = infRows.flush()
	}
	if err == nil {
		err = callRows.flush()
	}
	if err != nil {
		w.rollback()
		return fail("insert records", err)
	}

	dayRows := newRowBatch(w, "inference_days", "day, model, route, shard, inferences, escalated, input_tokens, output_tokens, cost_nanousd, unpriced", 10)
	for k, t := range days {
		if err := dayRows.add(k.day, k.model, k.route, k.shard, t.Inferences, t.Escalated, t.InputTokens, t.OutputTokens, t.CostNanoUSD, boolInt(unpriced[k])); err != nil {
			w.rollback()
			return fail("insert inference_days", err)
		}
	}
	toolDayRows := newRowBatch(w, "tool_call_days", "day, shard, tool_calls", 3)
	for k, n := range toolDays {
		if err := toolDayRows.add(k.day, k.shard, n); err != nil {
			w.rollback()
			return fail("insert tool_call_days", err)
		}
	}
	if err := dayRows.flush(); err != nil {
		w.rollback()
		return fail("insert inference_days", err)
	}
	if err := toolDayRows.flush(); err != nil {
		w.rollback()
		return fail("insert tool_call_days", err)
	}
	if err := w.commit(); err != nil {
		return fail("commit", err)
	}
	st.InferenceDays, st.ToolCallDays = len(days), len(toolDays)

	// The indexes are built once over the sorted data instead of kept up
	// row by row; the statements are the schema's own.
	for _, stmt := range indexStatements(schemaSQLite) {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fail("build index", err)
		}
	}
	for _, p := range []string{`ANALYZE`, `PRAGMA journal_mode=WAL`, `PRAGMA synchronous=FULL`} {
		if _, err := conn.ExecContext(ctx, p); err != nil {
			return fail(p, err)
		}
	}
	st.Elapsed = time.Since(began)
	return st, nil
}

// sqlitePathOf is the SQLite file o names; PostgreSQL is not generated.
func sqlitePathOf(o GenerateOptions) (string, error) {
	switch {
	case o.DSN == "":
		if o.StateDir == "" {
			return "", errors.New("kora: ledger: generate: neither DSN nor StateDir given")
		}
		return filepath.Join(o.StateDir, DefaultSQLiteFile), nil
	case strings.HasPrefix(o.DSN, "sqlite:"):
		return strings.TrimPrefix(o.DSN, "sqlite:"), nil
	}
	return "", fmt.Errorf("kora: ledger: generate: DSN %q: only SQLite ledgers are generated", redactDSN(o.DSN))
}

// createSchema creates the ledger's tables by opening the store, as Kora
// does when it first starts, and closes it again.
func createSchema(ctx context.Context, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// No StateDir: JSONL files beside the database are not this ledger's.
	s, err := Open(ctx, Options{DSN: "sqlite:" + path})
	if err != nil {
		return err
	}
	return s.Close()
}

// indexStatements returns the CREATE INDEX statements of a schema.
func indexStatements(schema string) []string {
	var out []string
	for _, stmt := range strings.Split(schema, ";") {
		if s := strings.TrimSpace(stmt); strings.HasPrefix(s, "CREATE INDEX") {
			out = append(out, s)
		}
	}
	return out
}

// genWriter holds the transaction Generate writes in, committing every
// genCommitEvery rows.
type genWriter struct {
	ctx  context.Context
	conn *sql.Conn
	tx   *sql.Tx
	rows int
}

func (w *genWriter) begin() error {
	if w.tx != nil {
		return nil
	}
	tx, err := w.conn.BeginTx(w.ctx, nil)
	if err != nil {
		return err
	}
	w.tx = tx
	return nil
}

// wrote counts rows and commits once a transaction has enough.
func (w *genWriter) wrote(n int) error {
	w.rows += n
	if w.rows < genCommitEvery {
		return nil
	}
	w.rows = 0
	return w.commit()
}

func (w *genWriter) commit() error {
	if w.tx == nil {
		return nil
	}
	tx := w.tx
	w.tx = nil
	return tx.Commit()
}

func (w *genWriter) rollback() {
	if w.tx != nil {
		w.tx.Rollback()
		w.tx = nil
	}
}

// rowBatch collects rows of one table and inserts them genBatch at a time
// with one prepared multi-row INSERT.
type rowBatch struct {
	w          *genWriter
	table      string
	cols       string
	width      int
	args       []any
	full       *sql.Stmt
	fullTx     *sql.Tx
	pendingRow int
}

func newRowBatch(w *genWriter, table, cols string, width int) *rowBatch {
	return &rowBatch{w: w, table: table, cols: cols, width: width, args: make([]any, 0, genBatch*width)}
}

func (b *rowBatch) add(vals ...any) error {
	b.args = append(b.args, vals...)
	b.pendingRow++
	if b.pendingRow < genBatch {
		return nil
	}
	return b.flush()
}

func (b *rowBatch) insertSQL(rows int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", b.width), ",") + ")"
	return "INSERT INTO " + b.table + " (" + b.cols + ") VALUES " + strings.TrimSuffix(strings.Repeat(row+",", rows), ",")
}

func (b *rowBatch) flush() error {
	if b.pendingRow == 0 {
		return nil
	}
	if err := b.w.begin(); err != nil {
		return err
	}
	ctx := b.w.ctx
	var err error
	if b.pendingRow == genBatch {
		if b.full == nil || b.fullTx != b.w.tx {
			if b.full, err = b.w.tx.PrepareContext(ctx, b.insertSQL(genBatch)); err != nil {
				return err
			}
			b.fullTx = b.w.tx
		}
		_, err = b.full.ExecContext(ctx, b.args...)
	} else {
		_, err = b.w.tx.ExecContext(ctx, b.insertSQL(b.pendingRow), b.args...)
	}
	if err != nil {
		return err
	}
	n := b.pendingRow
	b.args, b.pendingRow = b.args[:0], 0
	return b.w.wrote(n)
}
