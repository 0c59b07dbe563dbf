package gateway

import (
	"errors"
	"io"
	"sync"
)

// bodyBudget bounds the request-body bytes the server holds at once
// (server.max_body_bytes_in_flight). Decoding a body takes several times
// its size, so this bound, not the per-request one, keeps a burst of
// large requests from exhausting memory.
type bodyBudget struct {
	mu    sync.Mutex
	limit int64
	held  int64
}

// reserve takes n bytes of the budget, or reports that they are not there;
// it never waits, so that no request queues behind others' bodies.
func (b *bodyBudget) reserve(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.limit-b.held {
		return false
	}
	b.held += n
	return true
}

func (b *bodyBudget) release(n int64) {
	b.mu.Lock()
	b.held -= n
	b.mu.Unlock()
}

// inUse is how many bytes are reserved now.
func (b *bodyBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held
}

// errOverBudget is what a budgetReader returns once the budget is spent.
var errOverBudget = errors.New("the server holds server.max_body_bytes_in_flight bytes of request bodies already")

// budgetReader reserves what it reads as it reads it, so that a body
// holds the budget for the bytes that arrived, never for the length it
// announced; held is what it reserved, for the release.
type budgetReader struct {
	r      io.Reader
	budget *bodyBudget
	held   int64
}

func (br *budgetReader) Read(p []byte) (int, error) {
	n, err := br.r.Read(p)
	if n > 0 {
		if !br.budget.reserve(int64(n)) {
			return 0, errOverBudget
		}
		br.held += int64(n)
	}
	return n, err
}
