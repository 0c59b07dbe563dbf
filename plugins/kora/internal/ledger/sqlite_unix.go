//go:build unix

package ledger

import (
	"errors"
	"path/filepath"
	"syscall"
)

// cannotWrite reports whether the database's directory (or the file, once
// it exists) refuses writes: permissions or a read-only mount.
func (d *sqliteDialect) cannotWrite() bool {
	for _, p := range []string{d.path, filepath.Dir(d.path)} {
		if err := syscall.Access(p, 2 /* W_OK */); err != nil && !errors.Is(err, syscall.ENOENT) {
			return true
		}
	}
	return false
}

// diskFull reports whether the database's file system has no room left.
func (d *sqliteDialect) diskFull() bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(d.path), &st); err != nil {
		return false
	}
	return st.Bavail*uint64(st.Bsize) < 64<<10
}
