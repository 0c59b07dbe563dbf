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
	MaxSize int64 `toml:"max_size" range:"trace_size"`
	// Keep is how many rotated files are kept; 0 keeps none (the file
	// starts over).
	Keep int `toml:"keep" range:"trace_keep"`
	// Queue bounds the records waiting to be written. When the writer
	// falls behind, new records are dropped and counted rather than
	// making a request wait.
	Queue int `toml:"queue" range:"trace_queue"`
	// IncludeContent puts prompts, answers, tool arguments and results
	// and hook payloads in the exported OpenTelemetry spans (the
	// OTEL_EXPORTER_OTLP_* variables switch them on); by default spans
	// carry names, models, token counts, decisions and timings only.
	IncludeContent bool `toml:"include_content"`
}

func defaultTrace() Trace {
	return Trace{MaxSize: defaultTraceMaxSize, Keep: defaultTraceKeep, Queue: defaultTraceQueue}
}

// validate resolves the file against the config file's directory, and
// refuses settings for a log that is not written.
func (c *Trace) validate(d *decoder, key toml.Key, set map[string]bool, ok, _ bool) bool {
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
