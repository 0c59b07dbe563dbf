package hookstretch

import (
	"context"
	"errors"
	"time"

	"github.com/hookhost/hookhost/hooks"
)

// An observer batch is several observer events for one plugin, queued in
// the order they happened, delivered in one exchange. The events are
// independent: each is answered (or fails) on its own, exactly as a plain
// delivery of it would be, and a failed one does not end the batch.

// Event is one observer event of a batch: the hook, its payload (the
// hook's payload type) and its own deadline, counted from the moment the
// plugin starts it.
type Event struct {
	Hook    hooks.Name
	Payload any
	Timeout time.Duration
}

// Batcher is implemented by plugins that can take several observer events
// in one exchange (remote plugins speaking protocol v2 whose manifest sets
// observer_batches).
//
// ObserveBatch delivers events in order and calls done once for every
// event, in event order, from the calling goroutine, as soon as that
// event's outcome is known: nil for an event the plugin answered, else why
// it failed, an error the Bus classifies as it would a plain call's. It
// returns when done has been called for the last event. It waits for each
// event's answer no longer than the event's Timeout, counted from when the
// previous event's answer came (the first: from when the batch was sent),
// so that a hung plugin holds the caller no longer than the events
// delivered one by one would. When the exchange breaks before the last
// event, the events not answered fail with the cause; none is delivered
// twice.
//
// ObserveBatch returns ErrNoBatch, before delivering anything and without
// calling done, when the plugin cannot take a batch now (a version 1
// process, or a plugin that did not set observer_batches): the caller
// then delivers the events one by one.
type Batcher interface {
	ObserveBatch(ctx context.Context, events []Event, done func(i int, err error)) error
}

// ErrNoBatch is what Batcher.ObserveBatch returns when the plugin cannot
// take an observer batch now.
var ErrNoBatch = errors.New("plugin cannot take several observer events in one exchange")
