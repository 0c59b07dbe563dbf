package config

import (
	"github.com/BurntSushi/toml"
)

// Defaults and limits of the [trace] table.
const (
	defaultTraceMaxSize = 64 << 20
	defaultTraceKeep    = 3
	defaultTraceQueue   = 4096
	minTraceMaxSize     = 4 << 10
	maxTraceMaxSize     = 1 << 40
	maxTraceKeep        = 100
	maxTraceQueue       = 1 << 20
	exampleTraceFile    = "decisions.jsonl"
)

// Trace is the [trace] table: the decision log, one JSON line per plugin
// hook call (what was sent, what came back, how long it took, how it
// ended), for seeing why a conversation went the way it did and for
// `hookhost replay`.
type Trace struct {
	// File is where the log is written, resolved against the config
	// file's directory; "" (the default) writes none.
	File string `toml:"file"`
	// MaxSize is the size in bytes at which the file is rotated: it
	// becomes File.1, File.1 becomes File.2, and so on.
	MaxSize int64 `toml:"max_size"`
	// Keep is how many rotated files are kept; 0 keeps none (the file
	// starts over).
	Keep int `toml:"keep"`
	// Queue bounds the records waiting to be written. When the writer
	// falls behind, new records are dropped and counted rather than
	// making a request wait.
	Queue int `toml:"queue"`
	// IncludeContent puts prompts, answers, tool arguments and results
	// and hook payloads in the exported OpenTelemetry spans (the
	// OTEL_EXPORTER_OTLP_* variables switch them on); by default spans
	// carry names, models, token counts, decisions and timings only.
	IncludeContent bool `toml:"include_content"`
}

func defaultTrace() Trace {
	return Trace{MaxSize: defaultTraceMaxSize, Keep: defaultTraceKeep, Queue: defaultTraceQueue}
}

// validate bounds the numbers, resolves the file against the config
// file's directory, and refuses settings for a log that is not written.
func (c *Trace) validate(d *decoder, key toml.Key, set map[string]bool, ok, _ bool) bool {
	bounded := func(name string, n, lo, hi, def int64, unit string) {
		if set[name] && (n < lo || n > hi) {
			d.fail(join(key, toml.Key{name}), -1, "must be between %d and %d %s, got %d (the default is %d)", lo, hi, unit, n, def)
			ok = false
		}
	}
	bounded("max_size", c.MaxSize, minTraceMaxSize, maxTraceMaxSize, defaultTraceMaxSize, "bytes (4 KiB to 1 TiB)")
	bounded("keep", int64(c.Keep), 0, maxTraceKeep, defaultTraceKeep, "files")
	bounded("queue", int64(c.Queue), 1, maxTraceQueue, defaultTraceQueue, "records")
	if c.File != "" {
		c.File = resolve(d.dir, c.File)
		return ok
	}
	if _, written := set["file"]; written {
		// file = "" switches the log off and keeps the other settings.
		return ok
	}
	for _, name := range []string{"max_size", "keep", "queue"} {
		if _, written := set[name]; written {
			d.fail(join(key, toml.Key{name}), -1, "has no effect: trace.file is not set, so no decision log is written; set file = %q to write one, or remove this key", exampleTraceFile)
			return false
		}
	}
	return ok
}
