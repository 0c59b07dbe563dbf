// Package redact blanks secrets (an upstream's API key) out of what a
// server sent back, before anyone else sees it. The provider adapters use
// String on the errors they build, where JSON has already been decoded;
// the gateway's transparent proxy uses Mask and Reader on bytes that pass
// through as they came, where a secret may also be written with JSON
// escapes (\u0073k-…) that a client would decode back into the secret.
package redact

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// Marker is what String puts in place of a secret.
const Marker = "[redacted]"

// minLen is the shortest secret blanked out: shorter strings would blank
// ordinary words, and are no real key.
const minLen = 4

// String blanks every secret out of s.
func String(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= minLen {
			s = strings.ReplaceAll(s, sec, Marker)
		}
	}
	return s
}

// Mask overwrites in b every place a secret is written, as it is or with
// JSON escapes for any of its characters, with a mask of the same length,
// and reports whether it found one. Keeping the length keeps a
// Content-Length true, so a body with no secret in it is left byte for
// byte, and one with a secret changes only where the secret was.
func Mask(b []byte, secrets ...string) bool {
	found := false
	for _, sec := range secrets {
		if len(sec) < minLen {
			continue
		}
		for i := 0; i < len(b); {
			j := nextCandidate(b[i:], sec[0])
			if j < 0 {
				break
			}
			i += j
			if n := matchAt(b[i:], sec); n > 0 {
				copy(b[i:i+n], mask(n))
				found = true
				i += n
				continue
			}
			i++
		}
	}
	return found
}

// nextCandidate is the offset of the next byte that could begin a secret
// whose first byte is first: that byte, or a backslash starting an escape.
func nextCandidate(b []byte, first byte) int {
	i := bytes.IndexByte(b, first)
	if k := bytes.IndexByte(b, '\\'); k >= 0 && (i < 0 || k < i) {
		return k
	}
	return i
}

// matchAt is the length of the secret written at the start of b, each of
// its bytes either as it is or as a JSON escape, or 0 when it is not there.
func matchAt(b []byte, sec string) int {
	n := 0
	for k := 0; k < len(sec); k++ {
		c, w := unescape(b[n:])
		if w == 0 || c != sec[k] {
			return 0
		}
		n += w
	}
	return n
}

// unescape reads one byte of text at the start of b: a plain byte, or a
// JSON escape of an ASCII character. w is 0 when b is empty.
func unescape(b []byte) (c byte, w int) {
	if len(b) == 0 {
		return 0, 0
	}
	if b[0] != '\\' || len(b) < 2 {
		return b[0], 1
	}
	switch b[1] {
	case '"', '\\', '/':
		return b[1], 2
	case 'u':
		if len(b) < 6 {
			return b[0], 1
		}
		v := 0
		for _, h := range b[2:6] {
			d := hexValue(h)
			if d < 0 {
				return b[0], 1
			}
			v = v<<4 | d
		}
		if v < 0x80 {
			return byte(v), 6
		}
	}
	return b[0], 1
}

func hexValue(h byte) int {
	switch {
	case '0' <= h && h <= '9':
		return int(h - '0')
	case 'a' <= h && h <= 'f':
		return int(h-'a') + 10
	case 'A' <= h && h <= 'F':
		return int(h-'A') + 10
	}
	return -1
}

// mask is n bytes saying that something was blanked out.
func mask(n int) []byte {
	if n >= len(Marker) {
		return []byte(Marker + strings.Repeat("*", n-len(Marker)))
	}
	return bytes.Repeat([]byte("*"), n)
}

// longest is how many bytes the longest of secrets can take once written
// with an escape for every character.
func longest(secrets []string) int {
	n := 0
	for _, s := range secrets {
		n = max(n, 6*len(s))
	}
	return n
}

// Reader masks secrets in a body that streams, as Mask does, passing
// each complete line on as soon as it has arrived, so that an event
// stream is not held back. A line longer than a secret's longest written
// form is passed on in parts, keeping back only what could be the start
// of a secret still arriving.
type Reader struct {
	src     io.ReadCloser
	secrets []string
	keep    int
	in      []byte // arrived, not yet masked and passed on
	out     []byte // masked, ready to be read
	err     error
}

// scratches are the buffers Read reads into, lent for one Read: a reader
// per proxied response would otherwise allocate 32 KiB for an answer of a
// few hundred bytes.
var scratches = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// NewReader masks secrets out of what src sends.
func NewReader(src io.ReadCloser, secrets ...string) *Reader {
	var kept []string
	for _, s := range secrets {
		if len(s) >= minLen {
			kept = append(kept, s)
		}
	}
	return &Reader{src: src, secrets: kept, keep: longest(kept)}
}

func (r *Reader) Read(p []byte) (int, error) {
	for len(r.out) == 0 {
		if r.err != nil {
			if len(r.in) > 0 {
				r.pass(len(r.in))
				continue
			}
			return 0, r.err
		}
		scratch := scratches.Get().(*[]byte)
		n, err := r.src.Read(*scratch)
		r.in = append(r.in, (*scratch)[:n]...)
		scratches.Put(scratch)
		r.err = err
		r.settle()
	}
	n := copy(p, r.out)
	r.out = r.out[n:]
	return n, nil
}

// settle passes on what can no longer be part of a secret that is still
// arriving: whole lines (a secret has no line break, nor does its escaped
// form), and of a long unfinished line all but its last keep bytes.
func (r *Reader) settle() {
	cut := bytes.LastIndexByte(r.in, '\n') + 1
	if rest := len(r.in) - cut; rest > 2*r.keep {
		cut = len(r.in) - r.keep
	}
	if cut > 0 {
		r.pass(cut)
	}
}

// pass masks the first n arrived bytes and moves them to out. A secret
// that begins before n and ends after it is masked whole.
func (r *Reader) pass(n int) {
	Mask(r.in, r.secrets...)
	// A secret found across the cut has been masked in place already; one
	// that may still be arriving begins at most keep bytes before the end.
	r.out = append(r.out[:0], r.in[:n]...)
	r.in = append(r.in[:0], r.in[n:]...)
}

// Close closes the body underneath.
func (r *Reader) Close() error { return r.src.Close() }
