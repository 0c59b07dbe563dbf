//go:build unix

package ledger

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

func unlockFile(f *os.File) error { return flock(f, syscall.LOCK_UN) }

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// lockFileShared takes a shared flock(2) on f, giving up when ctx ends: a
// writer of an earlier Kora that hangs while holding its lock must not
// hang the import with it.
func lockFileShared(ctx context.Context, f *os.File) error {
	for {
		err := flock(f, syscall.LOCK_SH|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("another process holds %s locked: %w", f.Name(), ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
