package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Upstream states, as Status.State reports them; the words are the
// plugins' own.
const (
	StateStarting    = "starting"     // the first connection is being made
	StateRunning     = "running"      // serving calls
	StateRestarting  = "restarting"   // lost or never reached; calls fail at once while it is reconnected
	StateCircuitOpen = "circuit_open" // failed too often; calls fail at once until the cool-down ends
	StateStopped     = "stopped"      // closed by the host
)

// Defaults for Options fields left zero, the plugins' where there is one.
const (
	// DefaultStartTimeout bounds one connection: process start, the MCP
	// handshake and tools/list. Servers run through npx may first unpack
	// a package.
	DefaultStartTimeout    = 30 * time.Second
	DefaultBackoffInitial  = 100 * time.Millisecond
	DefaultBackoffMax      = 5 * time.Second
	DefaultBackoffFactor   = 2.0
	DefaultCircuitFailures = 5
	DefaultCircuitWindow   = time.Minute
	DefaultCircuitCooldown = 30 * time.Second
	// hangGrace is how long a call may take to return after its deadline
	// before the server is taken for hung (not reading what the host
	// writes) and restarted.
	hangGrace = 2 * time.Second
	// reapTimeout bounds closing one lost connection.
	reapTimeout = 5 * time.Second
	// maxTools bounds how many tools one server may list.
	maxTools = 10000
	// maxPingTimeout bounds the ping that checks a server after a
	// timed-out call.
	maxPingTimeout = 5 * time.Second
	// progressBuffer is how many progress notifications of one call may
	// wait to be relayed; past that they are dropped, not queued.
	progressBuffer = 16
)

// ErrUnavailable is wrapped by a call's error when the server is not
// connected (restarting, circuit open, stopped): the call failed at once.
var ErrUnavailable = errors.New("mcp server unavailable")

// Options tune how upstream servers are connected and supervised.
type Options struct {
	// Logger receives the supervision's logs and each stdio server's
	// stderr (named "mcp.<server>.stderr"). nil discards them.
	Logger hclog.Logger
	// Version is hookhost's, sent as the client's version.
	Version      string
	StartTimeout time.Duration
	// Backoff spaces reconnections of a server that keeps failing: Initial,
	// times Factor per reconnection within CircuitWindow, capped at Max,
	// with jitter.
	BackoffInitial time.Duration
	BackoffMax     time.Duration
	BackoffFactor  float64
	// CircuitFailures reconnections within CircuitWindow open the circuit:
	// the server stays down for CircuitCooldown, then gets one trial.
	CircuitFailures int
	CircuitWindow   time.Duration
	CircuitCooldown time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.StartTimeout, DefaultStartTimeout)
	def(&o.BackoffInitial, DefaultBackoffInitial)
	def(&o.BackoffMax, DefaultBackoffMax)
	def(&o.CircuitWindow, DefaultCircuitWindow)
	def(&o.CircuitCooldown, DefaultCircuitCooldown)
	if o.BackoffMax < o.BackoffInitial {
		o.BackoffMax = o.BackoffInitial
	}
	if o.BackoffFactor < 1 {
		o.BackoffFactor = DefaultBackoffFactor
	}
	if o.CircuitFailures <= 0 {
		o.CircuitFailures = DefaultCircuitFailures
	}
	return o
}

// delay is the wait before the reconnection that follows n recent ones.
func (o Options) delay(n int) time.Duration {
	d := float64(o.BackoffInitial) * math.Pow(o.BackoffFactor, float64(n))
	if d > float64(o.BackoffMax) || math.IsInf(d, 0) || math.IsNaN(d) {
		d = float64(o.BackoffMax)
	}
	return time.Duration(d/2 + rand.Float64()*d/2)
}

// Tool is one of an upstream's tools as hookhost offers it.
type Tool struct {
	// Name is the namespaced name ("<server>__<tool>").
	Name string
	// Server is the upstream's name, Original the server's own name for
	// the tool, the one calls are made with.
	Server   string
	Original string
	// MCP is the tool as the server declared it, renamed to Name.
	MCP *mcp.Tool
}

// Status describes an upstream server.
type Status struct {
	Name      string
	Transport string // "stdio" or "http"
	State     string
	// Protocol is the MCP protocol version negotiated with the current
	// (or the latest) connection; "" before the first.
	Protocol string
	PID      int // the stdio server's process; 0 when none runs
	Restarts int // reconnection attempts since Start
	// Reason says why the server is not running, when it is not.
	Reason string
	Tools  []string // namespaced, in the server's order
}

// Upstream is one upstream MCP server, kept connected.
type Upstream struct {
	spec   ServerSpec
	opts   Options
	log    hclog.Logger
	client *mcp.Client

	progress sync.Map // progress token → chan *mcp.ProgressNotificationParams
	tokenSeq atomic.Uint64
	stats    callStats

	// The MCP clients whose calls are in flight, to relay the server's
	// elicitations to (see elicit.go).
	elicitMu  sync.Mutex
	elicitSeq uint64
	elicitors map[uint64]elicitor

	mu        sync.Mutex
	state     string
	cur       *conn
	dead      *conn
	reason    string
	restarts  int
	recent    []time.Time
	protocol  string
	tools     []Tool
	byName    map[string]Tool
	closed    bool
	listeners []func()

	kick    chan struct{}
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	started bool
}

// conn is one connection to the server.
type conn struct {
	sess    *mcp.ClientSession
	proc    *process // nil over HTTP
	version string
	dead    chan struct{} // closed when the session ended
	waitErr error         // the session's end, set before dead is closed
	// checking is set while a ping checks the connection (checkAlive).
	checking atomic.Bool
}

// New checks spec and prepares its upstream; Start connects it.
func New(spec ServerSpec, opts Options) (*Upstream, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	u := &Upstream{
		spec:   spec,
		opts:   opts,
		log:    opts.Logger.Named("mcp." + spec.Name),
		state:  StateStarting,
		byName: map[string]Tool{},
		kick:   make(chan struct{}, 1),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	u.client = mcp.NewClient(&mcp.Implementation{Name: "hookhost", Version: opts.Version}, &mcp.ClientOptions{
		// hookhost offers the server no roots and no sampling; it relays
		// elicitation to the MCP client whose call is running.
		Capabilities:                &mcp.ClientCapabilities{},
		ElicitationHandler:          u.onElicit,
		ProgressNotificationHandler: u.onProgress,
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) {
			go u.relist(req.Session)
		},
	})
	return u, nil
}

// Name is the server's name.
func (u *Upstream) Name() string { return u.spec.Name }

// Spec is the server's spec.
func (u *Upstream) Spec() ServerSpec { return u.spec }

// Start makes the first connection and starts supervision. An error says
// why the first connection failed; the server is then reconnected in the
// background, as after a crash, until Close.
func (u *Upstream) Start(ctx context.Context) error {
	u.mu.Lock()
	if u.started || u.closed {
		u.mu.Unlock()
		return fmt.Errorf("mcp server %q: host: Start called twice or after Close", u.spec.Name)
	}
	u.started = true
	u.mu.Unlock()
	c, tools, err := u.connect(ctx)
	if err != nil {
		u.mu.Lock()
		u.state, u.reason = StateRestarting, err.Error()
		u.mu.Unlock()
		// The error goes back to the caller, who reports it (the host
		// reports the server and closes it); a WARN here would say so twice.
		u.log.Debug("mcp server did not start; reconnecting it in the background until Close", "reason", err)
	} else {
		u.install(c, tools)
	}
	go u.supervise()
	return err
}

// connect makes one connection: starts the process or reaches the URL,
// negotiates the protocol and lists the tools.
func (u *Upstream) connect(ctx context.Context) (*conn, []Tool, error) {
	limit := u.spec.ResultLimit() + envelopeSlack
	ctx, cancel := context.WithTimeout(ctx, u.opts.StartTimeout)
	defer cancel()
	c := &conn{dead: make(chan struct{})}
	var transport mcp.Transport
	if u.spec.Stdio() {
		p, err := startProcess(u.spec, limit, u.log.Named("stderr"))
		if err != nil {
			return nil, nil, err
		}
		c.proc = p
		transport = &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin, MaxLineLength: -1}
	} else {
		t, err := httpTransport(u.spec, limit)
		if err != nil {
			return nil, nil, err
		}
		transport = t
	}
	fail := func(format string, a ...any) (*conn, []Tool, error) {
		if c.sess != nil {
			closeBounded(c.sess)
		}
		if c.proc != nil {
			c.proc.kill()
			if exit := c.proc.exitErr; exit != nil {
				format += " (the process exited: %v)"
				a = append(a, exit)
			}
		}
		return nil, nil, fmt.Errorf(format, a...)
	}
	sess, err := u.client.Connect(ctx, transport, nil)
	if err != nil {
		return fail("mcp server %q: no MCP handshake within %s: %v", u.spec.Name, u.opts.StartTimeout, err)
	}
	c.sess = sess
	c.version = sess.InitializeResult().ProtocolVersion
	tools, err := u.listTools(ctx, sess)
	if err != nil {
		return fail("%v", err)
	}
	go func() {
		c.waitErr = sess.Wait()
		close(c.dead)
	}()
	return c, tools, nil
}

// listTools reads the server's tools and namespaces those its allowlist
// keeps. Two that become one name refuse the server: which of them a call
// meant could not be told.
func (u *Upstream) listTools(ctx context.Context, sess *mcp.ClientSession) ([]Tool, error) {
	var tools []Tool
	seen := map[string]string{}
	n := 0
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcp server %q: tools/list failed: %v", u.spec.Name, err)
		}
		if n++; n > maxTools {
			return nil, fmt.Errorf("mcp server %q: lists more than %d tools", u.spec.Name, maxTools)
		}
		if !u.spec.allows(t.Name) {
			continue
		}
		ns, ok := NamespacedName(u.spec.Name, t.Name)
		if !ok {
			u.log.Warn("tool not offered: its namespaced name is not one model providers accept (^[a-zA-Z0-9_-]{1,64}$)",
				"tool", t.Name, "as", ns)
			continue
		}
		if other, dup := seen[ns]; dup {
			return nil, fmt.Errorf("mcp server %q: tools %q and %q both become %q after namespacing; the server is refused (rename one on the server, or leave one out with mcp.servers.%s.tools)",
				u.spec.Name, other, t.Name, ns, u.spec.Name)
		}
		if m, ok := t.InputSchema.(map[string]any); !ok || m["type"] != "object" {
			u.log.Warn("tool not offered: its input schema is not an object schema, which MCP requires", "tool", t.Name)
			continue
		}
		seen[ns] = t.Name
		renamed := *t
		renamed.Name = ns
		tools = append(tools, Tool{Name: ns, Server: u.spec.Name, Original: t.Name, MCP: &renamed})
	}
	return tools, nil
}

// install makes c the current connection with tools.
func (u *Upstream) install(c *conn, tools []Tool) {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		reap(c)
		return
	}
	u.cur, u.state, u.reason, u.protocol = c, StateRunning, "", c.version
	changed := u.setTools(tools)
	listeners := slices.Clone(u.listeners)
	u.mu.Unlock()
	pid := 0
	if c.proc != nil {
		pid = c.proc.pid
	}
	u.log.Info("mcp server connected", "protocol", c.version, "tools", len(tools), "pid", pid)
	if changed {
		for _, f := range listeners {
			f()
		}
	}
}

// setTools records the tool list; mu is held. It reports whether the list
// changed.
func (u *Upstream) setTools(tools []Tool) bool {
	same := len(tools) == len(u.tools)
	if same {
		for i := range tools {
			a, _ := json.Marshal(tools[i].MCP)
			b, _ := json.Marshal(u.tools[i].MCP)
			if string(a) != string(b) {
				same = false
				break
			}
		}
	}
	u.tools = tools
	u.byName = make(map[string]Tool, len(tools))
	for _, t := range tools {
		u.byName[t.Name] = t
	}
	return !same
}

// relist reads the tools again after the server said they changed.
func (u *Upstream) relist(sess *mcp.ClientSession) {
	ctx, cancel := context.WithTimeout(u.ctx, u.opts.StartTimeout)
	defer cancel()
	tools, err := u.listTools(ctx, sess)
	if err != nil {
		u.log.Warn("mcp server's new tool list is not used", "reason", err)
		return
	}
	u.mu.Lock()
	if u.cur == nil || u.cur.sess != sess {
		u.mu.Unlock()
		return
	}
	changed := u.setTools(tools)
	listeners := slices.Clone(u.listeners)
	u.mu.Unlock()
	if changed {
		for _, f := range listeners {
			f()
		}
	}
}

// onToolsChanged has f called whenever the tool list changes.
func (u *Upstream) onToolsChanged(f func()) {
	u.mu.Lock()
	u.listeners = append(u.listeners, f)
	u.mu.Unlock()
}

// Tools returns the tools the server offers now.
func (u *Upstream) Tools() []Tool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.tools)
}

// Status reports the server's state.
func (u *Upstream) Status() Status {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := Status{Name: u.spec.Name, Transport: "http", State: u.state, Protocol: u.protocol, Restarts: u.restarts, Reason: u.reason}
	if u.spec.Stdio() {
		st.Transport = "stdio"
	}
	if u.cur != nil && u.cur.proc != nil {
		st.PID = u.cur.proc.pid
	}
	for _, t := range u.tools {
		st.Tools = append(st.Tools, t.Name)
	}
	return st
}

// current returns the connection, or an ErrUnavailable error at once.
func (u *Upstream) current() (*conn, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cur == nil {
		why := u.reason
		if why == "" {
			why = "not connected"
		}
		return nil, fmt.Errorf("mcp server %q is %s (%s): %w", u.spec.Name, u.state, why, ErrUnavailable)
	}
	return u.cur, nil
}

// markDown takes c out of service and has the supervisor reconnect,
// unless c is no longer current.
func (u *Upstream) markDown(c *conn, reason string) {
	u.mu.Lock()
	if u.cur != c || u.closed {
		u.mu.Unlock()
		return
	}
	u.cur, u.dead, u.state, u.reason = nil, c, StateRestarting, reason
	u.mu.Unlock()
	u.log.Warn("mcp server down; reconnecting it", "reason", reason)
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// supervise runs until Close: it notices a connection that ended and
// brings the server back.
func (u *Upstream) supervise() {
	defer close(u.done)
	for {
		u.mu.Lock()
		c := u.cur
		u.mu.Unlock()
		var dead <-chan struct{}
		if c != nil {
			dead = c.dead
		}
		if c != nil {
			select {
			case <-u.ctx.Done():
				return
			case <-dead:
				u.markDown(c, u.lostReason(c))
			case <-u.kick:
			}
		}
		if u.ctx.Err() != nil {
			return
		}
		u.mu.Lock()
		gone := u.dead
		u.dead = nil
		down := u.cur == nil && !u.closed
		u.mu.Unlock()
		if gone != nil {
			reap(gone)
		}
		if down {
			u.restore()
		}
	}
}

// lostReason says why a connection ended on its own.
func (u *Upstream) lostReason(c *conn) string {
	if c.proc != nil {
		if c.proc.stdout.tooLarge() {
			return fmt.Sprintf("the server sent a message over %d bytes (mcp.servers.%s.max_result_size)", u.spec.ResultLimit(), u.spec.Name)
		}
		select {
		case <-c.proc.exited:
			return fmt.Sprintf("the process exited: %v", exitText(c.proc.exitErr))
		default:
		}
	}
	select {
	case <-c.dead:
		if c.waitErr != nil {
			return fmt.Sprintf("the connection ended: %v", c.waitErr)
		}
	default:
	}
	return "the connection ended"
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// restore reconnects the server, or returns when it is closed.
func (u *Upstream) restore() {
	trialFailed := false
	for u.ctx.Err() == nil {
		n := u.recentRestarts()
		if trialFailed || n >= u.opts.CircuitFailures {
			u.setState(StateCircuitOpen)
			u.log.Warn("mcp server circuit open: not reconnecting it for a while",
				"reconnections", n, "window", u.opts.CircuitWindow, "cooldown", u.opts.CircuitCooldown)
			if !u.sleep(u.opts.CircuitCooldown) {
				return
			}
			u.setState(StateRestarting)
			if u.attempt() {
				u.mu.Lock()
				u.recent = nil
				u.mu.Unlock()
				u.log.Warn("mcp server circuit closed")
				return
			}
			trialFailed = true
			continue
		}
		if !u.sleep(u.opts.delay(n)) {
			return
		}
		if u.attempt() {
			return
		}
	}
}

func (u *Upstream) recentRestarts() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	cutoff := time.Now().Add(-u.opts.CircuitWindow)
	u.recent = slices.DeleteFunc(u.recent, func(t time.Time) bool { return t.Before(cutoff) })
	return len(u.recent)
}

// attempt makes one reconnection and reports whether the server is back
// (or closed, which also ends the retrying).
func (u *Upstream) attempt() bool {
	u.mu.Lock()
	u.restarts++
	u.recent = append(u.recent, time.Now())
	n := u.restarts
	u.mu.Unlock()
	c, tools, err := u.connect(u.ctx)
	if err != nil {
		if u.ctx.Err() != nil {
			return true
		}
		u.mu.Lock()
		u.reason = err.Error()
		u.mu.Unlock()
		u.log.Warn("mcp server reconnection failed", "attempt", n, "reason", err)
		return false
	}
	u.install(c, tools)
	return true
}

func (u *Upstream) setState(s string) {
	u.mu.Lock()
	if !u.closed {
		u.state = s
	}
	u.mu.Unlock()
}

func (u *Upstream) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-u.ctx.Done():
		return false
	}
}

// reap ends a connection: the process first (so that nothing waits on a
// server that does not answer), then the session, bounded.
func reap(c *conn) {
	if c.proc != nil {
		c.proc.kill()
	}
	closeBounded(c.sess)
}

// closeBounded closes a session, waiting at most reapTimeout: an HTTP
// session's close is a request to a server that may not answer.
func closeBounded(sess *mcp.ClientSession) {
	done := make(chan struct{})
	go func() {
		_ = sess.Close()
		close(done)
	}()
	t := time.NewTimer(reapTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// Close stops supervision and the server, bounded by ctx.
func (u *Upstream) Close(ctx context.Context) error {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return nil
	}
	u.closed = true
	u.state = StateStopped
	cur, dead := u.cur, u.dead
	u.cur, u.dead = nil, nil
	started := u.started
	u.mu.Unlock()
	u.cancel()
	for _, c := range []*conn{cur, dead} {
		if c != nil {
			reap(c)
		}
	}
	if !started {
		return nil
	}
	select {
	case <-u.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mcp server %q: host: a reconnection was still under way: %w", u.spec.Name, ctx.Err())
	}
}

// onProgress hands a progress notification to the call it belongs to,
// dropping it when that call's relay is behind or the call is over.
func (u *Upstream) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	tok, ok := req.Params.ProgressToken.(string)
	if !ok {
		return
	}
	if v, ok := u.progress.Load(tok); ok {
		select {
		case v.(chan *mcp.ProgressNotificationParams) <- req.Params:
		default:
		}
	}
}

// CallTool calls the server's tool (its own name, not the namespaced one)
// with args, a JSON object. progress, when not nil, is called with the
// server's progress notifications for this call, from one goroutine, in
// order, until the call returns; those that arrive faster than progress
// returns are dropped.
//
// The call is bounded by the spec's timeout and its result by
// max_result_size. A result the server marked isError is a result, not an
// error; an error says what went wrong and names the server.
func (u *Upstream) CallTool(ctx context.Context, tool string, args json.RawMessage, progress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	start := time.Now()
	res, outcome, err := u.callTool(ctx, tool, args, progress)
	u.stats.record(tool, outcome, time.Since(start))
	return res, err
}

// callTool is CallTool, also saying how the call ended (an Outcome*).
func (u *Upstream) callTool(ctx context.Context, tool string, args json.RawMessage, progress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, string, error) {
	c, err := u.current()
	if err != nil {
		return nil, OutcomeUnavailable, err
	}
	defer u.trackElicitor(ctx)()
	cctx, cancel := context.WithTimeout(ctx, u.spec.CallTimeout())
	defer cancel()
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	if len(args) == 0 {
		params.Arguments = json.RawMessage("{}")
	}
	if progress != nil {
		tok := fmt.Sprintf("hookhost-%d", u.tokenSeq.Add(1))
		ch := make(chan *mcp.ProgressNotificationParams, progressBuffer)
		u.progress.Store(tok, ch)
		defer u.progress.Delete(tok)
		params.SetProgressToken(tok)
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			for {
				select {
				case p := <-ch:
					progress(p)
				case <-stop:
					return
				}
			}
		}()
	}

	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		r, err := c.sess.CallTool(cctx, params)
		answered <- answer{r, err}
	}()
	var a answer
	select {
	case a = <-answered:
	case <-cctx.Done():
		t := time.NewTimer(hangGrace)
		select {
		case a = <-answered:
		case <-t.C:
			// The SDK returns at the deadline unless it is stuck writing
			// to a server that reads nothing: that server is hung.
			u.markDown(c, fmt.Sprintf("a call to %q was still stuck %s after its deadline", tool, hangGrace))
			a = answer{err: cctx.Err()}
		}
		t.Stop()
	}
	res, err := u.outcome(ctx, cctx, c, tool, a.res, a.err)
	switch {
	case err == nil && res.IsError:
		return res, OutcomeToolError, nil
	case err == nil:
		return res, OutcomeOK, nil
	case ctx.Err() != nil:
		return nil, OutcomeCancelled, err
	case cctx.Err() != nil:
		return nil, OutcomeTimeout, err
	}
	return nil, OutcomeError, err
}

// outcome turns what the SDK returned into a bounded result or an error
// naming the server.
func (u *Upstream) outcome(parent, cctx context.Context, c *conn, tool string, res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	name := u.spec.Name
	if err == nil {
		if res == nil {
			return nil, fmt.Errorf("mcp server %q: tool %q returned no result", name, tool)
		}
		b, merr := json.Marshal(res)
		if merr != nil {
			return nil, fmt.Errorf("mcp server %q: tool %q returned a result that cannot be encoded: %v", name, tool, merr)
		}
		if limit := u.spec.ResultLimit(); len(b) > limit {
			return nil, fmt.Errorf("mcp server %q: tool %q returned %d bytes, over the limit of %d (mcp.servers.%s.max_result_size)",
				name, tool, len(b), limit, name)
		}
		return res, nil
	}
	if c.proc == nil && overLimit(err) {
		return nil, fmt.Errorf("mcp server %q: tool %q: the server sent an answer over %d bytes, the limit (mcp.servers.%s.max_result_size): %v",
			name, tool, u.spec.ResultLimit(), name, err)
	}
	if c.proc != nil && c.proc.stdout.tooLarge() {
		u.markDown(c, u.lostReason(c))
		return nil, fmt.Errorf("mcp server %q: tool %q: the server sent a message over %d bytes, the limit (mcp.servers.%s.max_result_size); the connection was dropped and the server is restarted",
			name, tool, u.spec.ResultLimit(), name)
	}
	switch {
	case parent.Err() != nil:
		return nil, fmt.Errorf("mcp server %q: call to %q cancelled: %w", name, tool, parent.Err())
	case cctx.Err() != nil:
		go u.checkAlive(c)
		return nil, fmt.Errorf("mcp server %q: tool %q did not answer within %s (mcp.servers.%s.timeout)", name, tool, u.spec.CallTimeout(), name)
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return nil, fmt.Errorf("mcp server %q: tool %q: %s", name, tool, rpcErr.Message)
	}
	if lost(c, err) {
		u.markDown(c, u.lostReason(c))
		return nil, fmt.Errorf("mcp server %q: lost the server during the call to %q (%v); it is restarted", name, tool, err)
	}
	return nil, fmt.Errorf("mcp server %q: tool %q: bad answer: %v", name, tool, err)
}

// checkAlive pings a server one of whose calls timed out: a slow tool is
// the tool's business, but a server that cannot answer a ping (stopped,
// deadlocked, reading nothing) would fail every later call the same way,
// so it is replaced. One check runs per connection at a time.
func (u *Upstream) checkAlive(c *conn) {
	if !c.checking.CompareAndSwap(false, true) {
		return
	}
	defer c.checking.Store(false)
	ctx, cancel := context.WithTimeout(u.ctx, min(u.spec.CallTimeout(), maxPingTimeout))
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.sess.Ping(ctx, nil) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil && u.ctx.Err() == nil {
		u.markDown(c, fmt.Sprintf("the server did not answer a ping after a call timed out (%v)", err))
	}
}

// overLimit reports whether an HTTP call failed on the size bound: the
// body reader's error, or the SDK's for an event stream. The SDK does not
// always wrap what it read, hence the text.
func overLimit(err error) bool {
	return errors.Is(err, errMessageTooLarge) || strings.Contains(err.Error(), errMessageTooLarge.Error()) ||
		strings.Contains(err.Error(), "SSE event exceeded")
}

// lost reports whether err means the connection is gone.
func lost(c *conn, err error) bool {
	if errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	select {
	case <-c.dead:
		return true
	default:
	}
	if c.proc != nil {
		select {
		case <-c.proc.exited:
			return true
		default:
		}
	}
	return false
}
