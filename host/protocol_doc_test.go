//go:build unix

package host

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// PROTOCOL.md says that every "the host says" line in it was produced by
// the host against a plugin with that one mistake. Each row of its "the
// host says" tables is held here to the host's words for that mistake:
// every backquoted quote in the row, "…" standing for any text and
// durations for any duration, is in what the host says. A row without a
// case here fails, as does a case whose row is gone.
func TestProtocolQuotesAreTheHostsWords(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lineScript := func(name, line string) string {
		return writeScript(t, dir, name, "#!/bin/sh\nprintf '%s\\n' '"+line+"'\nexec sleep 30\n")
	}
	line := func(cert []byte, enc *base64.Encoding) string {
		return "1|2|unix|/tmp/hookhost-doc/plugin.sock|grpc|" + enc.EncodeToString(cert)
	}
	urlSafe := selfSigned(t, "localhost", time.Now().Add(time.Hour))
	for !strings.ContainsAny(base64.RawURLEncoding.EncodeToString(urlSafe), "-_") {
		urlSafe = selfSigned(t, "localhost", time.Now().Add(time.Hour))
	}

	// Each case: a fragment of the row's mistake column, and the plugin
	// that makes that mistake, started by Start or, for a warning, Check.
	starts := []struct{ row, name, path string }{
		{"anything printed before the line", "banner", writeScript(t, dir, "banner", "#!/bin/sh\necho 'hello from plugin'\nexec sleep 30\n")},
		{"not flushed", "unflushed", handmadeAs(t, "unflushed")},
		{"printed on stderr", "stderr", handmadeAs(t, "stderr")},
		{"exited before printing", "quitter", writeScript(t, dir, "quitter", "#!/bin/sh\necho 'ModuleNotFoundError: No module named grpc' >&2\nexit 1\n")},
		{"core protocol", "badcore", handmadeAs(t, "badcore")},
		{"app protocol", "appnine", lineScript("appnine", "1|9|unix|/tmp/hookhost-doc/plugin.sock|grpc|")},
		{"field 5 missing", "four", lineScript("four", "1|1|unix|/tmp/hookhost-doc/plugin.sock")},
		{"field 6 missing", "nocert", handmadeAs(t, "nocert")},
		{"padded base64", "padded", handmadeAs(t, "padded")},
		{"URL-safe", "urlsafe", lineScript("urlsafe", line(urlSafe, base64.RawURLEncoding))},
		{"PEM instead of DER", "pem", lineScript("pem", "1|2|unix|/tmp/hookhost-doc/plugin.sock|grpc|-----BEGIN CERTIFICATE-----"+base64.StdEncoding.EncodeToString(urlSafe)+"-----END CERTIFICATE-----")},
		{"no sixth field", "nocert2", handmadeAs(t, "nocert-2")},
		{"SAN other than", "ipsan", lineScript("ipsan", line(ipOnlyCert(t), base64.RawStdEncoding))},
		{"no SAN, CN", "cnonly", lineScript("cnonly", line(selfSigned(t, "", time.Now().Add(time.Hour)), base64.RawStdEncoding))},
		{"client auth only", "clientonly", lineScript("clientonly", line(selfSigned(t, "localhost", time.Now().Add(time.Hour), x509.ExtKeyUsageClientAuth), base64.RawStdEncoding))},
		{"another certificate than", "othercert", oneMistakeAs(t, "othercert")},
	}
	checks := []struct{ row, name, path string }{
		{"client certificate not required", "noclientauth", handmadeAs(t, "noclientauth")},
		{"relative socket path", "relsock", oneMistakeAs(t, "relsock")},
		// The warnings the text quotes outside the tables.
		{"", "nocontroller", handmadeAs(t, "nocontroller")},
		{"", "noexit", handmadeAs(t, "noexit")},
		{"", "hangshutdown", oneMistakeAs(t, "hangshutdown")},
		{"", "plainlog", handmadeAs(t, "plainlog")},
	}
	said := map[string]string{} // row fragment → the host's words
	var plugs []plug
	for _, c := range starts {
		plugs = append(plugs, plug{c.name, entry(c.path)})
	}
	opts := fastOptions()
	opts.StartTimeout = 2 * time.Second
	_, errs := start(t, configOf(plugs...), opts)
	for _, c := range starts {
		if e := findErr(errs, c.name); e != nil {
			said[c.row] = e.Reason
		}
	}
	plugs = nil
	for _, c := range checks {
		plugs = append(plugs, plug{c.name, entry(c.path)})
	}
	var warned []string // every warning Check gave
	for i, r := range Check(context.Background(), Specs(configOf(plugs...)), fastOptions()) {
		var ws []string
		for _, w := range r.Warnings {
			ws = append(ws, w.Reason)
		}
		warned = append(warned, ws...)
		if checks[i].row != "" {
			said[checks[i].row] = strings.Join(ws, "\n")
		}
	}
	prose := proseCheckQuotes(string(doc))
	if len(prose) < 4 {
		t.Errorf("found %d quotes of plugins check's warnings outside the tables, want the 4 of the controller and logging sections", len(prose))
	}
	for _, q := range prose {
		if !slices.ContainsFunc(warned, func(w string) bool { return saysQuote(w, q) }) {
			t.Errorf("PROTOCOL.md quotes plugins check as warning\n\t%s\nbut its warnings are\n\t%s", q, strings.Join(warned, "\n\t"))
		}
	}

	rows := hostSaysRows(string(doc))
	if len(rows) < len(said) {
		t.Errorf("PROTOCOL.md has %d rows in its \"the host says\" tables, fewer than the %d mistakes here", len(rows), len(said))
	}
	used := map[string]bool{}
	for _, row := range rows {
		key := ""
		for k := range said {
			if strings.Contains(row.mistake, k) {
				key = k
			}
		}
		if key == "" {
			t.Errorf("PROTOCOL.md's row %q has no case here: add the plugin that makes that mistake", row.mistake)
			continue
		}
		used[key] = true
		for _, q := range row.quotes {
			if !saysQuote(said[key], q) {
				t.Errorf("PROTOCOL.md, %q: the host is quoted as saying\n\t%s\nbut says\n\t%s", row.mistake, q, said[key])
			}
		}
	}
	for k := range said {
		if !used[k] {
			t.Errorf("no row of PROTOCOL.md's \"the host says\" tables is about %q", k)
		}
	}
}

// hostSaysRow is one row of a PROTOCOL.md table headed "the host says".
type hostSaysRow struct {
	mistake string
	quotes  []string // the backquoted parts of its second column
}

func hostSaysRows(doc string) []hostSaysRow {
	var rows []hostSaysRow
	in := false
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(l, "|") {
			in = false
			continue
		}
		if strings.Contains(l, "the host says") {
			in = true
			continue
		}
		if !in || strings.HasPrefix(l, "|---") {
			continue
		}
		cells := strings.Split(strings.ReplaceAll(l, `\|`, "\x00"), " | ")
		if len(cells) < 2 {
			continue
		}
		row := hostSaysRow{mistake: strings.TrimPrefix(cells[0], "| ")}
		for i, part := range strings.Split(cells[1], "`") {
			if i%2 == 1 && part != "plugins check" {
				row.quotes = append(row.quotes, strings.ReplaceAll(part, "\x00", "|"))
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// proseCheckQuotes are the quotes of plugins check's words outside the
// tables: "`plugins check` warns: `…`", "(`plugins check`: `…`)".
func proseCheckQuotes(doc string) []string {
	var text []string
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(l, "|") {
			text = append(text, l)
		}
	}
	flat := strings.Join(strings.Fields(strings.Join(text, " ")), " ")
	var quotes []string
	for _, m := range proseQuoteRE.FindAllStringSubmatch(flat, -1) {
		quotes = append(quotes, m[1])
	}
	return quotes
}

var proseQuoteRE = regexp.MustCompile("`plugins check`[^`]{0,40}?: `([^`]+)`")

var durationRE = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s)\b`)

// saysQuote reports whether msg holds quote's fragments, in order, "…"
// standing for any text and a duration for any duration.
func saysQuote(msg, quote string) bool {
	msg = durationRE.ReplaceAllString(msg, "DURATION")
	quote = durationRE.ReplaceAllString(quote, "DURATION")
	for _, frag := range strings.Split(quote, "…") {
		i := strings.Index(msg, frag)
		if i < 0 {
			return false
		}
		msg = msg[i+len(frag):]
	}
	return true
}

// ipOnlyCert is a certificate for the address 127.0.0.1, with no DNS name.
func ipOnlyCert(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:   time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// PROTOCOL.md's "What the host puts in the environment" names every
// variable the host sets for a plugin, the lane's among them, and the lane
// is the socket on descriptor 3 that it says.
func TestProtocolDocNamesEveryVariableTheHostSets(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	section, ok := docSection(string(doc), "### What the host puts in the environment")
	if !ok {
		t.Fatal(`PROTOCOL.md has no section "### What the host puts in the environment"`)
	}
	dir := t.TempDir()
	envFile, fdFile := dir+"/env", dir+"/fd3"
	// The plugin records what it was given, then fails to start.
	path := writeScript(t, dir, "envdump", "#!/bin/sh\n/usr/bin/env > "+envFile+"\n"+
		"if [ -S /dev/fd/3 ]; then echo socket > "+fdFile+"; fi\nexit 1\n")
	if _, errs := start(t, configOf(plug{"envdump", entry(path)}), fastOptions()); findErr(errs, "envdump") == nil {
		t.Fatalf("a plugin that exits at once started: %v", errs)
	}
	env, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatalf("the plugin did not record its environment: %v", err)
	}
	vars := map[string]string{}
	for _, l := range strings.Split(string(env), "\n") {
		// PLUGIN_CLIENT_CERT's value runs over several lines.
		if name, value, ok := strings.Cut(l, "="); ok && name != "" && strings.ToUpper(name) == name && !strings.ContainsAny(name, " -") {
			vars[name] = value
		}
	}
	delete(vars, "PWD") // the shell's own
	if len(vars) < 5 {
		t.Fatalf("found %d variables in the plugin's environment, want the host's handshake ones at least:\n%s", len(vars), env)
	}
	for name := range vars {
		if !strings.Contains(section, "`"+name+"`") {
			t.Errorf("the host sets %s for a plugin, but PROTOCOL.md's \"What the host puts in the environment\" does not name it", name)
		}
	}
	if v := vars["HOOKHOST_LANE_FD"]; v != "3" {
		t.Errorf("HOOKHOST_LANE_FD=%q, PROTOCOL.md says it is always 3", v)
	}
	if b, err := os.ReadFile(fdFile); err != nil || strings.TrimSpace(string(b)) != "socket" {
		t.Errorf("the plugin's descriptor 3 is not a socket (%q, %v), PROTOCOL.md says it is the lane", b, err)
	}
}

// docSection returns the text under heading up to the next heading of any
// level.
func docSection(doc, heading string) (string, bool) {
	_, rest, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		return "", false
	}
	var lines []string
	inCode := false
	for _, l := range strings.Split(rest, "\n") {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
		}
		if !inCode && strings.HasPrefix(l, "#") {
			break
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n"), true
}
