// Package streamcheck is the executable statement of the stream rules in
// WIRE.md's "What a gateway must get right for real clients": what the
// official SDKs' stream accumulators (openai-node, openai-python,
// anthropic-sdk-typescript, anthropic-sdk-python) rely on for Chat
// Completions, Responses and Anthropic Messages streams. Each checker reads
// a raw event stream, returns what a client accumulates from it and every
// rule the stream breaks, so the dialects' own tests and the tests through
// the real SDK clients hold streams to one and the same set of rules.
package streamcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Violations lists the rules a stream breaks, one sentence each.
type Violations []string

func (v Violations) Error() string { return strings.Join(v, "\n") }

// Call is a tool call as a client accumulates it from a stream.
type Call struct {
	ID, Name, Arguments string
}

type report struct {
	proto string
	list  Violations
}

func (r *report) add(format string, args ...any) {
	r.list = append(r.list, r.proto+" stream: "+fmt.Sprintf(format, args...))
}

func (r *report) err() error {
	if len(r.list) == 0 {
		return nil
	}
	return r.list
}

// read starts checking a stream of protocol proto: its frames, its
// comment lines and the report its violations go to.
func read(proto string, raw []byte) (*report, []frame, int) {
	r := &report{proto: proto}
	fs, comments := frames(raw, r)
	return r, fs, comments
}

// frame is one server-sent event as a client parses it.
type frame struct {
	event string
	data  string
}

// frames splits a raw event stream the way the SDKs do: events end with a
// blank line, ":" lines are comments (keepalives; counted, else ignored),
// several data lines join with a newline. Frames holding only comments are
// left out.
func frames(raw []byte, r *report) (out []frame, comments int) {
	text := strings.ReplaceAll(string(raw), "\r\n", "\n")
	if text != "" && !strings.HasSuffix(text, "\n\n") {
		tail := text
		if len(tail) > 200 {
			tail = "…" + tail[len(tail)-200:]
		}
		r.add("does not end with a blank line after its last event: %q", tail)
	}
	for n, block := range strings.Split(text, "\n\n") {
		var f frame
		var data []string
		named := false
		for _, line := range strings.Split(block, "\n") {
			switch {
			case line == "":
			case strings.HasPrefix(line, ":"):
				comments++
			case strings.HasPrefix(line, "event:"):
				if named {
					r.add("frame %d has two event: lines (a blank line is missing between events): %q", n, block)
				}
				f.event, named = strings.TrimSpace(strings.TrimPrefix(line, "event:")), true
			case strings.HasPrefix(line, "data:"):
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			default:
				r.add("frame %d: line %q is neither a comment, an event name nor data", n, line)
			}
		}
		if len(data) == 0 {
			if named {
				r.add("frame %d has an event: line but no data: %q", n, block)
			}
			continue
		}
		f.data = strings.Join(data, "\n")
		out = append(out, f)
	}
	return out, comments
}

// object decodes a JSON object, nil when data is not one.
func object(data string) map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(data), &m) != nil {
		return nil
	}
	return m
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func obj(m map[string]any, k string) map[string]any {
	o, _ := m[k].(map[string]any)
	return o
}

// integer reads a JSON number that is a whole number.
func integer(m map[string]any, k string) (int, bool) {
	f, ok := m[k].(float64)
	if !ok || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
