package hookbus

import (
	"context"
	"reflect"
	"time"

	"github.com/hookhost/hookhost/hooks"
)

// CallRecord is one plugin call as the Bus made it: what was sent, what
// came back, how long it took and how it ended. Config.OnCall receives one
// for every call, plain or a stage of a stretch, observer deliveries
// included.
type CallRecord struct {
	Start   time.Time
	Latency time.Duration
	// RequestID is the id WithRequestID put on the call's context: the
	// gateway request or the chat turn that made the call. Observer
	// deliveries are made by a worker, detached from the request, and carry
	// none; their payload's session id ties them to it.
	RequestID string
	Plugin    string
	Hook      hooks.Name
	// Payload is what the plugin was sent (a value of the hook's payload
	// type); the callee must not change it.
	Payload any
	// Answer is what the plugin answered, as it answered it, before the
	// hook's rules were applied (so a malformed answer is here as sent);
	// nil when it answered nothing, failed, or the hook observes.
	Answer any
	// Kind is KindNone for a call that answered (Answer may still be nil:
	// no opinion), else why it counted as nil; Err says what went wrong.
	Kind FailureKind
	Err  error
}

type requestIDKey struct{}

// WithRequestID returns ctx carrying id, the request or turn whose hook
// calls it makes; CallRecord.RequestID reports it.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID returns the id WithRequestID put on ctx, "" when none.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// record hands one finished call to Config.OnCall; callers check that one
// is set, so that a Bus without it spends nothing on records.
func (b *Bus) record(ctx context.Context, s *subscriber, payload any, start time.Time, answer any, kind FailureKind, err error) {
	if rv := reflect.ValueOf(answer); answer != nil && rv.Kind() == reflect.Pointer && rv.IsNil() {
		answer = nil
	}
	b.onCall(ctx, CallRecord{
		Start: start, Latency: time.Since(start), RequestID: RequestID(ctx),
		Plugin: s.m.name, Hook: s.hook, Payload: payload, Answer: answer, Kind: kind, Err: err,
	})
}
