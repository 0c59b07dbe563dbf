//go:build !unix

package ledger

import (
	"context"
	"os"
	"sync"
)

// Without flock(2), appends and reads are serialised within this process
// only; run one Kora per state directory on such systems.
var fallback sync.Mutex

func lockFile(*os.File, bool) error {
	fallback.Lock()
	return nil
}

func unlockFile(*os.File) error {
	fallback.Unlock()
	return nil
}

func lockFileShared(context.Context, *os.File) error { return lockFile(nil, false) }
