//go:build !unix

package ledger

// Without access(2) and statfs(2) an I/O error stays ledger_failed and a
// file SQLite cannot open stays ledger_unavailable.
func (d *sqliteDialect) cannotWrite() bool { return false }
func (d *sqliteDialect) diskFull() bool    { return false }
