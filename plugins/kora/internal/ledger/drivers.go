package ledger

// The database/sql drivers behind the two stores: modernc.org/sqlite, a
// pure-Go SQLite, so that builds stay free of cgo, and pgx for PostgreSQL.
import (
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	_ "modernc.org/sqlite"             // registers "sqlite"
)
