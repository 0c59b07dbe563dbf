package relay

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/hookhost/hookhost/hookbus"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/dialect"
	"github.com/hookhost/hookhost/internal/loop"
	"github.com/hookhost/hookhost/internal/upstream"
)

// guard is the text of one streamed round on its way to the client.
//
// Hooks that may replace a round's text hold it. When every plugin serving
// transform_llm_output declared windows and every plugin serving
// post_llm_call_can_reissue declared decide_after_bytes (or none serves
// it), the round streams: its opening is held until the reissue hook has
// decided on it, then the text goes out window by window, each window
// judged by transform_llm_output before any of it is released, its last
// overlap bytes held back to open the next window (so that text spanning a
// boundary is judged whole, and a replacement can cover it). What is held
// is at most the opening, or one window and the delta that filled it.
// Otherwise the whole round is held (whole), as hosts before these options
// did.
type guard struct {
	r *run
	// whole: hold the round's text for the hooks to see once it is whole
	// (show sends it).
	whole bool
	// window and overlap are the windows' sizes; 0 window: no windows.
	window, overlap int
	// op is the current call's opening, held for the reissue hook; nil
	// when the hook is not asked on openings.
	op *opening
	// pending is the text not yet released: the held back end of the last
	// window judged (its first carry bytes), then the new text.
	pending strings.Builder
	carry   int
	// offset is how much of the round's text was released.
	offset int64
	// fed: text reached the guard (the round streamed).
	fed bool
	// by are the plugins that replaced a window; stopped is set once a
	// plugin stopped the answer (what follows is dropped).
	by      []string
	stopped *hookbus.OutputStop
}

// opening is a first call's opening, held until post_llm_call_can_reissue
// has decided on it.
type opening struct {
	n       int
	buf     strings.Builder
	decided bool
	early   *hookbus.ReissueRequest // the hook asked for a reissue
}

// newGuard returns the guard of a round of a streamed request.
func (r *run) newGuard() *guard {
	g := &guard{r: r}
	reissue := r.bus.Subscribed(hooks.PostLLMCallCanReissue, "")
	transform := r.bus.Subscribed(hooks.TransformLLMOutput, "")
	window, overlap, windowed := r.bus.OutputWindow()
	switch {
	case reissue && r.bus.DecideAfter() == 0, transform && !windowed:
		g.whole = true
	case transform:
		g.window, g.overlap = window, overlap
	}
	return g
}

// call makes one model call of the round, its text going through the
// guard.
func (g *guard) call(ctx context.Context, c loop.Call) (hooks.ModelResponse, *upstream.WireResponse, error) {
	r := g.r
	// A new call: an opening held for an earlier one (which the reissue
	// hook, asked on it whole, replaced by this call) is dropped unseen.
	g.op = nil
	if n := r.bus.DecideAfter(); n > 0 && !g.whole && c.Decided != nil {
		g.op = &opening{n: n}
	}
	op := g.op
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	onText := func(d string) {
		if g.whole || d == "" || (op != nil && op.early != nil) {
			return
		}
		g.fed = true
		if op == nil || op.decided {
			g.feed(d)
			return
		}
		op.buf.WriteString(d)
		if op.buf.Len() < op.n {
			return
		}
		op.decided = true
		ev := hooks.LLMCall{
			SessionID: r.sessionID, Iteration: c.Iteration, Route: hooks.RouteGateway, Request: c.Request,
			Response: hooks.ModelResponse{Model: c.Request.Model, Message: hooks.Message{Role: hooks.RoleAssistant, Content: op.buf.String()}},
			Partial:  true,
		}
		if rq := r.bus.PostLLMCallCanReissue(ctx, ev); rq != nil {
			// Nothing of this call was shown: the reissue is the answer.
			op.early = rq
			cancel()
			return
		}
		*c.Decided = true
		held := op.buf.String()
		op.buf.Reset()
		g.feed(held)
	}
	resp, wire, err := r.upstream(ctx, c, onText)
	if op != nil && op.early != nil {
		return resp, wire, &loop.Early{Reissue: op.early}
	}
	return resp, wire, err
}

// end releases what the round still holds once its answer stands: an
// opening shorter than decide_after_bytes (the hook was asked on the
// whole answer), and the last window.
func (g *guard) end() {
	if g.whole {
		return
	}
	if op := g.op; op != nil && !op.decided {
		g.op = nil
		if op.buf.Len() > 0 {
			g.feed(op.buf.String())
		}
	}
	if g.window > 0 && g.stopped == nil && g.pending.Len() > 0 {
		g.judge(true)
	}
}

// feed takes new text of the round: released at once without windows,
// judged window by window with them.
func (g *guard) feed(d string) {
	if g.stopped != nil {
		return
	}
	if g.window == 0 {
		g.release(d)
		return
	}
	g.pending.WriteString(d)
	// A window needs new text beyond what it carries: a replacement that
	// left the carried part at a window's length is not judged again.
	for g.stopped == nil && g.pending.Len() >= g.window && g.pending.Len() > g.carry {
		g.judge(false)
	}
}

// judge asks transform_llm_output about the pending window, releases what
// the answers leave of it but its last overlap bytes (all of it when last)
// and keeps those to open the next window.
func (g *guard) judge(last bool) {
	r := g.r
	text := g.pending.String()
	g.pending.Reset()
	ch := r.model.TransformOutput(r.ctx, r.rounds, hooks.LLMOutput{
		Text: text, Windowed: true, Offset: g.offset, Overlap: int64(g.carry), Last: last,
	})
	if ch.Stop != nil {
		g.stopped = ch.Stop
		g.carry = 0
		g.release(ch.Stop.Message)
		return
	}
	g.by = append(g.by, ch.By...)
	out := ch.Text
	cut := len(out)
	if !last {
		cut = max(len(out)-g.overlap, 0)
		for cut > 0 && cut < len(out) && !utf8.RuneStart(out[cut]) {
			cut-- // whole characters only
		}
	}
	g.release(out[:cut])
	g.offset += int64(cut)
	g.pending.WriteString(out[cut:])
	g.carry = len(out) - cut
}

// release sends text to the client.
func (g *guard) release(s string) {
	if s == "" {
		return
	}
	g.r.streamed.WriteString(s)
	g.r.sinkDo(func(sk dialect.Sink) error { return sk.Text(s) })
}

// streamed reports whether the round's text went out through the guard
// (and so through its hooks), not held for show.
func (g *guard) streamed() bool { return g != nil && !g.whole && g.fed }
