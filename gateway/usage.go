package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/hookhost/hookhost/hooks"
)

// usageNote collects the usage a proxied response reports, so that a
// bypass request's tokens are settled like a gateway one's.
type usageNote struct {
	mu   sync.Mutex
	used hooks.Usage
	seen bool
}

type usageKey struct{}

func withUsageNote(ctx context.Context, n *usageNote) context.Context {
	return context.WithValue(ctx, usageKey{}, n)
}

// result is the usage the response reported, and whether it reported any.
func (n *usageNote) result() (hooks.Usage, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.used, n.seen
}

// maxUsageScan bounds what is held to find the usage: a whole JSON answer,
// or one line of an event stream. Past it the estimate stands.
const maxUsageScan = 8 << 20

// noteUsage makes resp's body report its usage to the note in its
// request's context, if any, as the client reads it. An encoded body is
// left alone: its estimate stands.
func noteUsage(resp *http.Response) {
	n, ok := resp.Request.Context().Value(usageKey{}).(*usageNote)
	if !ok || resp.StatusCode != http.StatusOK {
		return
	}
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &usageReader{src: resp.Body, note: n, stream: mt == "text/event-stream"}
}

// usageReader passes a body on unchanged while it looks for the usage:
// in each "data:" line of an event stream, or in a whole JSON answer once
// it ends.
type usageReader struct {
	src    io.ReadCloser
	note   *usageNote
	stream bool
	buf    []byte
	over   bool // buf passed maxUsageScan: skipped to the next line
}

func (u *usageReader) Read(p []byte) (int, error) {
	n, err := u.src.Read(p)
	chunk := p[:n]
	for len(chunk) > 0 {
		i := -1
		if u.stream {
			i = bytes.IndexByte(chunk, '\n')
		}
		part := chunk
		if i >= 0 {
			part = chunk[:i]
		}
		if len(u.buf)+len(part) > maxUsageScan {
			u.over, u.buf = true, u.buf[:0]
		} else if !u.over {
			u.buf = append(u.buf, part...)
		}
		if i < 0 {
			break
		}
		if data, ok := bytes.CutPrefix(bytes.TrimSpace(u.buf), []byte("data:")); ok && !u.over {
			u.scan(bytes.TrimSpace(data))
		}
		u.buf, u.over, chunk = u.buf[:0], false, chunk[i+1:]
	}
	if err == io.EOF && !u.stream && !u.over {
		u.scan(u.buf)
	}
	return n, err
}

func (u *usageReader) Close() error { return u.src.Close() }

// wireUsage is usage as any of the three protocols reports it.
type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheCreation    int `json:"cache_creation_input_tokens"`
	CacheRead        int `json:"cache_read_input_tokens"`
}

// scan takes the usage from one JSON object: top-level "usage" (Chat
// Completions, a Messages answer, message_delta), "message.usage"
// (message_start) or "response.usage" (Responses, response.completed).
// Counts only grow: a stream reports them cumulatively.
func (u *usageReader) scan(b []byte) {
	if !bytes.Contains(b, []byte(`"usage"`)) {
		return
	}
	var v struct {
		Usage    *wireUsage                 `json:"usage"`
		Message  struct{ Usage *wireUsage } `json:"message"`
		Response struct{ Usage *wireUsage } `json:"response"`
	}
	if json.Unmarshal(b, &v) != nil {
		return
	}
	u.note.mu.Lock()
	defer u.note.mu.Unlock()
	for _, w := range []*wireUsage{v.Usage, v.Message.Usage, v.Response.Usage} {
		if w == nil {
			continue
		}
		in := max(w.PromptTokens, w.InputTokens+w.CacheCreation+w.CacheRead)
		out := max(w.CompletionTokens, w.OutputTokens)
		u.note.used.InputTokens = max(u.note.used.InputTokens, in)
		u.note.used.OutputTokens = max(u.note.used.OutputTokens, out)
		u.note.seen = true
	}
}
