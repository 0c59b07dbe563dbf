//go:build !unix

package ledger

import (
	"context"
	"os"
)

// Without flock(2) the import cannot wait out a writer of an earlier Kora;
// it reads what is there, and a line being written is skipped as torn.
func lockFileShared(context.Context, *os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
