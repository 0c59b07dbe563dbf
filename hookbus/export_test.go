package hookbus

import "time"

// SetObserverLinger sets how long workers of batching plugins linger for
// more events, for the Buses made until restore is called.
func SetObserverLinger(d time.Duration) (restore func()) {
	old := observerLinger
	observerLinger = d
	return func() { observerLinger = old }
}

// MaxObserverBatch is maxObserverBatch, for tests.
const MaxObserverBatch = maxObserverBatch
