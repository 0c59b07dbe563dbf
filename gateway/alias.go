package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
)

// Model aliases (server.model_aliases): a client asks for a model name the
// upstream does not serve (Claude Code's claude-… names on an OpenAI
// upstream) and the upstream gets the model the alias names. The client
// still sees the name it asked for, in every response, on both routes:
//
//   - gateway route: the decoded request names the target, so hooks and
//     the upstream see the model that answers; the response and stream
//     events are written with the name the client asked for.
//   - bypass route: the request body's top-level "model" value is
//     replaced by the target, and every "model" string value in the
//     response (whole or streamed) by the name asked for; every other
//     byte passes as it came. The upstream is asked for an uncompressed
//     response, since compressed bytes could not be renamed.

// upstreamModel is the model the upstream gets for a request naming
// model, and whether model is an alias.
func (s *Server) upstreamModel(model string) (string, bool) {
	t, ok := s.p.server.ModelAliases[model]
	return t, ok
}

// servedModels are the names clients may ask for, as GET /v1/models lists
// them: the host's models, then the aliases in name order.
func (s *Server) servedModels() []string {
	out := append([]string(nil), s.p.models...)
	for _, a := range slices.Sorted(maps.Keys(s.p.server.ModelAliases)) {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// aliasKey is the context key of a bypass request whose model is an
// alias; its value is the name the client asked for.
type aliasKey struct{}

func askedModel(ctx context.Context) (string, bool) {
	m, ok := ctx.Value(aliasKey{}).(string)
	return m, ok
}

// setModel returns body with its top-level "model" value replaced by
// model; every other byte stays as it was. body must be a JSON object with
// one top-level "model" key, as topLevelModel has checked.
func setModel(body []byte, model string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		if key, _ := tok.(string); key != "model" {
			continue
		}
		// The value's bytes end where the decoder stands; Decode keeps
		// them as written, so they start len(value) before that.
		end := int(dec.InputOffset())
		start := end - len(value)
		if start < 0 || !bytes.Equal(body[start:end], value) {
			return nil, errors.New("cannot locate the model value")
		}
		quoted, err := json.Marshal(model)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(body)-len(value)+len(quoted))
		out = append(append(append(out, body[:start]...), quoted...), body[end:]...)
		return out, nil
	}
	return nil, errors.New("the body has no model")
}

// modelValue matches a "model" key and its string value, as the providers
// write them (compact or indented). Bounded, so that the renamer holds at
// most a few hundred bytes back.
var modelValue = regexp.MustCompile(`"model"[ \t\r\n]{0,16}:[ \t\r\n]{0,16}("(?:[^"\\]|\\.){0,256}")`)

// modelHold is more than the longest match: bytes the renamer holds back
// in case a match continues in the next read.
const modelHold = 7 + 16 + 1 + 16 + 2 + 2*256

// renameModels gives every "model" string value in resp's body the name
// the client asked for, as the body is read. A compressed body is left
// as it is: its bytes cannot be matched.
func renameModels(resp *http.Response, asked string) {
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return
	}
	quoted, _ := json.Marshal(asked)
	resp.Body = &modelRenamer{src: resp.Body, quoted: quoted, buf: make([]byte, 32<<10)}
	// The length changes with the name.
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
}

// modelRenamer is an io.ReadCloser renaming as it reads.
type modelRenamer struct {
	src    io.ReadCloser
	quoted []byte // the new value, as JSON
	buf    []byte // read buffer
	in     []byte // read, not yet scanned to the end
	out    []byte // ready to hand out
	err    error  // the source's error, handed out once in and out are empty
}

func (m *modelRenamer) Read(p []byte) (int, error) {
	for len(m.out) == 0 {
		if m.err != nil {
			if len(m.in) == 0 {
				return 0, m.err
			}
			m.scan(true)
			continue
		}
		n, err := m.src.Read(m.buf)
		m.in = append(m.in, m.buf[:n]...)
		if err != nil {
			m.err = err
			continue
		}
		m.scan(false)
	}
	n := copy(p, m.out)
	m.out = m.out[n:]
	return n, nil
}

// scan moves what in holds to out, renamed, except (unless final) the
// last modelHold bytes, where a match may still be incomplete: a match
// that starts before them ends within in, since none is longer.
func (m *modelRenamer) scan(final bool) {
	cut := len(m.in)
	if !final {
		cut -= modelHold
		if cut <= 0 {
			return
		}
	}
	done := 0
	var out []byte
	for _, loc := range modelValue.FindAllSubmatchIndex(m.in, -1) {
		if loc[0] >= cut {
			break
		}
		// Only the value changes: key, colon and spacing stay.
		out = append(append(out, m.in[done:loc[2]]...), m.quoted...)
		done = loc[3]
	}
	if done < cut {
		out = append(out, m.in[done:cut]...)
		done = cut
	}
	m.out = out
	m.in = append(m.in[:0:0], m.in[done:]...)
}

func (m *modelRenamer) Close() error { return m.src.Close() }
