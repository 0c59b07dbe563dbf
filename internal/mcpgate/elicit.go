package mcpgate

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Elicitation: an upstream server may ask, during a tool call, for input
// from the user: by a request while the call runs (elicitation/create,
// protocols before 2026-07-28), or by a result that needs input, after
// which the SDK calls again with the answer (2026-07-28). Only the MCP client whose call is
// running can answer, so the gateway puts the asking function of the
// call's client session on the call's context, and the upstream, while the
// call is in flight, relays the server's request to it and the answer
// back. A result that needs input belongs to its call; a request sent
// while calls run does not say which it belongs to: it is relayed when
// every call in flight to that server comes from one client,
// and declined otherwise, as it is when no call from an MCP client is in
// flight (the model's calls, offer_to_model, have nobody to ask) and when
// the client does not support elicitation or fails to answer.

// elicitor asks the user through one MCP client.
type elicitor struct {
	client any // the client session, to tell clients apart
	ask    func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
}

type elicitKey struct{}

// withElicitor makes calls made with ctx relay elicitations to session.
func withElicitor(ctx context.Context, session *mcp.ServerSession) context.Context {
	return context.WithValue(ctx, elicitKey{}, elicitor{client: session, ask: session.Elicit})
}

// declined is the answer to an elicitation nobody can answer.
func declined() *mcp.ElicitResult { return &mcp.ElicitResult{Action: "decline"} }

// trackElicitor records the elicitor of ctx, if any, while a call is in
// flight; the returned function forgets it.
func (u *Upstream) trackElicitor(ctx context.Context) func() {
	e, ok := ctx.Value(elicitKey{}).(elicitor)
	if !ok {
		return func() {}
	}
	u.elicitMu.Lock()
	defer u.elicitMu.Unlock()
	if u.elicitors == nil {
		u.elicitors = map[uint64]elicitor{}
	}
	u.elicitSeq++
	id := u.elicitSeq
	u.elicitors[id] = e
	return func() {
		u.elicitMu.Lock()
		defer u.elicitMu.Unlock()
		delete(u.elicitors, id)
	}
}

// onElicit answers the server's elicitation: one its call's result asked
// for (protocol 2026-07-28 and later: ctx is then the call's), or one it
// sent while the call ran (earlier protocols).
func (u *Upstream) onElicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if e, ok := ctx.Value(elicitKey{}).(elicitor); ok {
		return u.relayElicit(ctx, e, req)
	}
	u.elicitMu.Lock()
	var target *elicitor
	ambiguous := false
	for _, e := range u.elicitors {
		switch {
		case target == nil:
			target = &e
		case target.client != e.client:
			ambiguous = true
		}
	}
	u.elicitMu.Unlock()
	switch {
	case target == nil:
		u.log.Info("elicitation declined: no call from an MCP client is in flight to ask it through", "message", req.Params.Message)
		return declined(), nil
	case ambiguous:
		u.log.Info("elicitation declined: calls from several MCP clients are in flight, and the server's request does not say whose it is", "message", req.Params.Message)
		return declined(), nil
	}
	return u.relayElicit(ctx, *target, req)
}

// relayElicit asks e's client; a client that cannot be asked declines.
func (u *Upstream) relayElicit(ctx context.Context, e elicitor, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	res, err := e.ask(ctx, req.Params)
	if err != nil {
		// Among others: the client does not support elicitation, or
		// speaks a protocol (2026-07-28 and later) on which a server may
		// not ask it while serving its call.
		u.log.Info("elicitation declined: the MCP client did not answer it", "message", req.Params.Message, "error", err)
		return declined(), nil
	}
	return res, nil
}
