//go:build unix

package host

import (
	"strings"
	"testing"
	"time"
)

// PROTOCOL.md says "Every 'the host says' line in this file was produced
// by the host ...; messages may gain detail, and the part quoted stays in
// them." For these mistakes the quoted part is no longer in the host's
// error.
func TestReviewProtocolQuotesStayInTheHostsErrors(t *testing.T) {
	t.Parallel()
	four := writeScript(t, t.TempDir(), "four", "#!/bin/sh\necho '1|1|unix|/tmp/hookhost-review-nowhere.sock'\nexec sleep 30\n")
	cases := []struct {
		name, path, quote, row string
	}{
		{"badcore", handmadeAs(t, "badcore"), "speaks an incompatible go-plugin core protocol: incompatible core API version with plugin", "PROTOCOL.md: Handshake, core protocol not 1"},
		{"unflushed", handmadeAs(t, "unflushed"), "did not complete the go-plugin handshake within", "PROTOCOL.md: Handshake, the line written but not flushed"},
		{"four", four, `speaks a protocol other than gRPC: unsupported plugin protocol "netrpc"`, "PROTOCOL.md: Handshake, field 5 missing (four fields)"},
		{"padded", handmadeAs(t, "padded"), "error parsing server cert: illegal base64 data at input byte", "PROTOCOL.md: AutoMTLS, padded base64"},
		{"nocert", handmadeAs(t, "nocert"), "x509: certificate signed by unknown authority", "PROTOCOL.md: Handshake and AutoMTLS, field 6 missing"},
	}
	var plugs []plug
	for _, c := range cases {
		plugs = append(plugs, plug{c.name, entry(c.path)})
	}
	opts := fastOptions()
	opts.StartTimeout = 2 * time.Second
	_, errs := start(t, configOf(plugs...), opts)
	for _, c := range cases {
		e := findErr(errs, c.name)
		switch {
		case e == nil:
			t.Errorf("%s: started", c.name)
		case !strings.Contains(e.Error(), c.quote):
			t.Errorf("%s: %s quotes %q, but the host says:\n%v", c.name, c.row, c.quote, e)
		}
	}
}
