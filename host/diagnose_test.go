//go:build unix

package host

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/hookhost/hookhost/internal/syncbuf"

	"github.com/hookhost/hookhost/internal/testenv"
)

// handmadeAs returns a link under name to the handmade test plugin, which
// does go-plugin's handshake by hand and makes the mistake its name
// begins with.
func handmadeAs(t testing.TB, name string) string {
	t.Helper()
	return linkAs(t, filepath.Join(filepath.Dir(bins.echo), "handmade"), name)
}

// oneMistakeAs returns a link under name to the onemistake test plugin.
func oneMistakeAs(t testing.TB, name string) string {
	t.Helper()
	return linkAs(t, filepath.Join(filepath.Dir(bins.echo), "onemistake"), name)
}

// wantProblem fails the test unless e names problem and its fix speaks
// the language: it contains every fragment of want and none of avoid.
func wantProblem(t *testing.T, e *StartError, problem string, want, avoid []string) {
	t.Helper()
	if e == nil {
		t.Fatalf("no start error, want problem %s", problem)
	}
	t.Log(e)
	if e.Problem != problem {
		t.Errorf("problem = %q, want %q; error: %v", e.Problem, problem, e)
	}
	for _, w := range want {
		if !strings.Contains(e.Error(), w) {
			t.Errorf("error does not mention %q:\n%v", w, e)
		}
	}
	for _, a := range avoid {
		if strings.Contains(e.Fix, a) {
			t.Errorf("fix mentions %q, which does not fit the plugin's language:\n%s", a, e.Fix)
		}
	}
}

// goAdvice is what a fix for a Go plugin says and one for any other
// plugin must not.
var goAdvice = []string{"sdk.Serve", "plugins/sdk"}

// Each mistake a hand-written plugin makes in the handshake or in TLS is
// named for what it is by Start, with a fix that names the PROTOCOL.md
// section; the plugin is a Go binary, so the fix may point at sdk.Serve.
func TestHandwrittenPluginMistakesAreNamed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, problem string
		want          []string
	}{
		{"padded", ProblemPaddedBase64, []string{"padded base64", "illegal base64 data at input byte", "not a multiple of 3", "restart", "RawStdEncoding", "PROTOCOL.md#automtls"}},
		{"nocert", ProblemNoCertField, []string{"no 6th field", "certificate signed by unknown authority", "PROTOCOL.md#automtls"}},
		{"plaintext", ProblemNoTLS, []string{"without TLS", "PROTOCOL.md#automtls"}},
		{"wrongsan", ProblemCertSAN, []string{"not valid for localhost", "plugin.example", `"localhost"`, "PROTOCOL.md#automtls"}},
		{"distrust", ProblemClientCertRejected, []string{"refused the host's client certificate", "PLUGIN_CLIENT_CERT", "PROTOCOL.md#automtls"}},
		{"othercookie", ProblemWrongCookie, []string{"another magic cookie", "its stderr ends with", "This binary is a plugin", "HOOKHOST_PLUGIN=d3c1b0a2-hookhost-plugin-v1", "plugins.entries.othercookie.path", "PROTOCOL.md#handshake"}},
		{"unflushed", ProblemUnflushed, []string{"never flushed", "terminal", `"1|`, "PROTOCOL.md#handshake"}},
		{"stderr", ProblemHandshakeOnStderr, []string{"on stderr", "stdout", "PROTOCOL.md#handshake"}},
		{"fields3", ProblemHandshakeFields, []string{"3 |-separated fields", `"1|2|unix"`, "PROTOCOL.md#handshake"}},
		{"badcore", ProblemCoreProtocol, []string{"1st field", `"2"`, "must be 1", "PROTOCOL.md#handshake"}},
		{"badnet", ProblemNetwork, []string{"3rd field", `"udp"`, "unix", "tcp", "PROTOCOL.md#handshake"}},
		{"netrpc", ProblemNotGRPC, []string{"5th field", `"netrpc"`, "grpc", "PROTOCOL.md#handshake"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := handmadeAs(t, c.name)
			opts := fastOptions()
			opts.StartTimeout = 2 * time.Second
			h, errs := start(t, configOf(plug{c.name, entry(path)}), opts)
			if len(h.Members()) != 0 {
				t.Fatalf("%s started", c.name)
			}
			wantProblem(t, findErr(errs, c.name), c.problem, append(c.want, "sdk.Serve"), nil)
			waitFor(t, "no process of "+c.name+" left, probes included", func() bool { return len(processesOf(path)) == 0 })
		})
	}
}

// A plugin that makes its certificate twice serves one and prints the
// other: TLS says only "certificate signed by unknown authority", but the
// host holds both certificates (the line's, and the one a TLS probe is
// shown) and names the mismatch, in words not escaped nor doubled.
func TestServedCertificateOtherThanTheLinesIsNamed(t *testing.T) {
	t.Parallel()
	path := oneMistakeAs(t, "othercert")
	_, errs := start(t, configOf(plug{"othercert", entry(path)}), fastOptions())
	e := findErr(errs, "othercert")
	if e == nil {
		t.Fatal("started")
	}
	t.Log(e)
	if e.Problem != ProblemCertMismatch || !strings.Contains(e.Error(), "handshake line") {
		t.Errorf("problem %q: the error does not say that the served certificate is not the one in the handshake line: %v", e.Problem, e)
	}
	if strings.Contains(e.Reason, `\"`) || strings.Count(e.Reason, "signed by unknown authority") > 1 {
		t.Errorf("the reason quotes gRPC's escaped text, or the same TLS error twice: %s", e.Reason)
	}
}

// A padded certificate fails only when its DER length is not a multiple
// of 3: the handmade plugin makes sure of that, so the case is not left
// to chance. Here the same line is read with both lengths.
func TestPaddingFailsOnlyForSomeLengths(t *testing.T) {
	t.Parallel()
	for _, n := range []int{300, 301, 302} {
		der := selfSigned(t, "localhost", time.Now().Add(time.Hour))
		for len(der)%3 != n%3 {
			der = selfSigned(t, "localhost", time.Now().Add(time.Hour))
		}
		padded := base64.StdEncoding.EncodeToString(der)
		f := checkCertField(padded, language{kind: langPython})
		if len(der)%3 == 0 {
			if f != nil {
				t.Errorf("DER of %d bytes: %+v, want it accepted (no padding)", len(der), f)
			}
			continue
		}
		if f == nil || f.problem != ProblemPaddedBase64 || !strings.Contains(f.fix, `rstrip(b"=")`) {
			t.Errorf("DER of %d bytes: %+v, want padded-base64 with the Python fix", len(der), f)
		}
	}
}

func selfSigned(t *testing.T, dns string, notAfter time.Time, usage ...x509.ExtKeyUsage) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// No dns: a common name localhost and no subject alternative name.
	cn, names := dns, []string{dns}
	if dns == "" {
		cn, names = "localhost", nil
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, DNSNames: names,
		NotBefore: notAfter.Add(-2 * time.Hour), NotAfter: notAfter, ExtKeyUsage: usage,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// The mistakes in a handshake line that no test plugin needs a process
// for: the certificate field in other wrong shapes.
func TestCertificateFieldShapes(t *testing.T) {
	t.Parallel()
	der := selfSigned(t, "localhost", time.Now().Add(time.Hour))
	pemText := strings.ReplaceAll(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), "\n", "")
	urlSafe := base64.RawURLEncoding.EncodeToString(der)
	for !strings.ContainsAny(urlSafe, "-_") {
		der = selfSigned(t, "localhost", time.Now().Add(time.Hour))
		urlSafe = base64.RawURLEncoding.EncodeToString(der)
	}
	expired := base64.RawStdEncoding.EncodeToString(selfSigned(t, "localhost", time.Now().Add(-time.Hour)))
	clientOnly := base64.RawStdEncoding.EncodeToString(selfSigned(t, "localhost", time.Now().Add(time.Hour), x509.ExtKeyUsageClientAuth))
	cnOnly := base64.RawStdEncoding.EncodeToString(selfSigned(t, "", time.Now().Add(time.Hour)))
	notCert := base64.RawStdEncoding.EncodeToString([]byte(strings.Repeat("not a certificate ", 5)))
	line := func(cert string) string { return "1|2|unix|/tmp/p.sock|grpc|" + cert }
	cases := []struct {
		line, problem, mention string
	}{
		{line(pemText), ProblemCertEncoding, "PEM"},
		{line(urlSafe), ProblemCertEncoding, "URL-safe"},
		{line(expired), ProblemCertExpired, "valid only from"},
		{line(clientOnly), ProblemCertUsage, "server authentication"},
		{line(cnOnly), ProblemCertSAN, "not valid for localhost"},
		{line(notCert), ProblemCertNotX509, "not to a DER X.509 certificate"},
		{line("short"), ProblemNoCertField, "too short"},
		{"1|2|unix|relative.sock|grpc|" + urlSafe, ProblemCertEncoding, "URL-safe"},
		{"1|2|tcp|nowhere|grpc", ProblemAddress, "HOST:PORT"},
		{"1|two|unix|/tmp/p.sock|grpc", ProblemAppProtocol, "not a number"},
		{"1|2|unix|/tmp/p.sock", ProblemNotGRPC, "no 5th field"},
	}
	for _, c := range cases {
		f := checkLine(c.line, language{kind: langJS})
		if f == nil || f.problem != c.problem || !strings.Contains(f.reason, c.mention) {
			t.Errorf("checkLine(%.60q) = %+v, want %s mentioning %q", c.line, f, c.problem, c.mention)
		}
	}
	if f := checkLine(line(base64.RawStdEncoding.EncodeToString(der)), language{}); f != nil {
		t.Errorf("a good line: %+v", f)
	}
}

// Check passes plugins that work at a cost or a risk, and says what it
// is; the SDK's own plugin and a correct hand-written one get no warning.
func TestCheckWarnings(t *testing.T) {
	t.Parallel()
	results := Check(context.Background(), Specs(configOf(
		plug{"good", entry(handmadeAs(t, "good"))},
		plug{"viasdk", entry(echoAs(t, "viasdk"))},
		plug{"nocontroller", entry(handmadeAs(t, "nocontroller"))},
		plug{"noclientauth", entry(handmadeAs(t, "noclientauth"))},
		plug{"nocookie", entry(handmadeAs(t, "nocookie"))},
		plug{"noexit", entry(handmadeAs(t, "noexit"))},
		plug{"plainlog", entry(handmadeAs(t, "plainlog"))},
	)), fastOptions())
	want := map[string]struct {
		problem string
		mention []string
	}{
		"good":         {},
		"viasdk":       {},
		"nocontroller": {ProblemNoController, []string{"2 s", "SIGKILL", "plugin.GRPCController", "PROTOCOL.md#controller"}},
		"noclientauth": {ProblemClientCertNotRequired, []string{"without a client certificate", "PLUGIN_CLIENT_CERT", "PROTOCOL.md#automtls"}},
		"nocookie":     {ProblemCookieNotChecked, []string{"without the magic cookie", "HOOKHOST_PLUGIN", "PROTOCOL.md#handshake"}},
		"noexit":       {ProblemNoExitAfterShutdown, []string{"did not exit within 2s", "SIGKILL", "PROTOCOL.md#controller"}},
		"plainlog":     {ProblemPlainStderr, []string{`"plainlog: starting up"`, "DEBUG", "[WARN]", "PROTOCOL.md#standard-streams-and-logging"}},
	}
	for _, r := range results {
		w := want[r.Name]
		if !r.OK {
			t.Errorf("%s: not OK: %v", r.Name, r.Err)
			continue
		}
		if w.problem == "" {
			if len(r.Warnings) != 0 {
				t.Errorf("%s: warnings %v, want none", r.Name, r.Warnings)
			}
			continue
		}
		if len(r.Warnings) != 1 || r.Warnings[0].Problem != w.problem {
			t.Errorf("%s: warnings %+v, want one %s", r.Name, r.Warnings, w.problem)
			continue
		}
		t.Logf("%s: %s", r.Name, r.Warnings[0])
		for _, m := range w.mention {
			if !strings.Contains(r.Warnings[0].String(), m) {
				t.Errorf("%s: warning does not mention %q: %s", r.Name, m, r.Warnings[0])
			}
		}
	}
	// Each was started twice, once without its cookie.
	for _, r := range results {
		waitFor(t, "no process of "+r.Name+" left", func() bool { return len(processesOf(r.Path)) == 0 })
	}
}

// A plugin whose controller Shutdown never answers costs every stop the
// host's whole kill grace and a SIGKILL, as one with no controller does:
// Check warns of it.
func TestCheckWarnsOfAShutdownThatNeverAnswers(t *testing.T) {
	t.Parallel()
	path := oneMistakeAs(t, "hangshutdown")
	cfg := configOf(plug{"hangshutdown", entry(path)})

	// The cost is real: closing a host that runs it takes the kill grace.
	h := startOK(t, cfg, fastOptions())
	began := time.Now()
	if err := h.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	took := time.Since(began)
	t.Logf("closing a host running the plugin took %s", took.Round(time.Millisecond))
	if took < shutdownGrace {
		t.Fatalf("Close took %s: the plugin is not what this test needs", took)
	}

	r := Check(context.Background(), Specs(cfg), fastOptions())[0]
	if !r.OK {
		t.Fatalf("not OK: %v", r.Err)
	}
	for _, w := range r.Warnings {
		if w.Problem == ProblemNoExitAfterShutdown && strings.Contains(w.Reason, "did not answer") && strings.Contains(w.Reason, "SIGKILL") {
			return
		}
	}
	t.Errorf("Check gave warnings %+v for a plugin whose Shutdown never answers, want %s saying every stop waits and ends in SIGKILL", r.Warnings, ProblemNoExitAfterShutdown)
}

// script writes an executable script into dir.
func writeScript(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Scripts and binaries that are not Go get fixes in their own language,
// never Go advice; the #! mistakes every new script plugin makes get
// errors of their own.
func TestFixesFitTheLanguage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	falseBin := ""
	for _, p := range []string{"/bin/false", "/usr/bin/false"} {
		if _, err := os.Stat(p); err == nil {
			falseBin = p
			break
		}
	}
	python := []string{"hookhost-plugin", "plugins/python", "PROTOCOL.md#"}
	js := []string{"@hookhost/plugin", "plugins/typescript", "PROTOCOL.md#"}
	cases := []struct {
		name, path, problem string
		want                []string
	}{
		{"pyquits", writeScript(t, dir, "quits.py", "#!/bin/sh\necho 'no config file' >&2\nexit 3\n"),
			ProblemNoHandshake, append([]string{"no config file", "PROTOCOL.md#handshake"}, python...)},
		{"jsquits", writeScript(t, dir, "quits.mjs", "#!/bin/sh\nexit 3\n"),
			ProblemNoHandshake, js},
		{"noderunner", writeScript(t, dir, "runner", "#!/opt/hookhost-test-nowhere/node\n"),
			ProblemInterpreterMissing, append([]string{"/opt/hookhost-test-nowhere/node", "does not exist", "command -v node"}, js...)},
		{"crlf", writeScript(t, dir, "crlf.py", "#!/bin/sh\r\nexit 0\r\n"),
			ProblemInterpreterMissing, append([]string{"carriage return", "dos2unix"}, python...)},
		{"envpy", writeScript(t, dir, "envpy", "#!/usr/bin/env hookhost-test-no-such-python3\n"),
			ProblemEnvShebang, []string{"through env", "no PATH", `add "PATH" to plugins.entries.envpy.env`, "PROTOCOL.md#environment"}},
		{"noshebang", writeScript(t, dir, "plugin.py", "import sys\nprint('hello')\n"),
			ProblemInterpreterMissing, []string{"no #! line", "#!/usr/bin/python3", "PROTOCOL.md#environment"}},
		{"bareshebang", writeScript(t, dir, "bare.js", "#!\nconsole.log(1)\n"),
			ProblemInterpreterMissing, []string{"no #! line naming its interpreter", "#!/usr/bin/node"}},
		{"envcrash", writeScript(t, dir, "envcrash", "#!/usr/bin/env sh\necho 'sh: no such file: state.db' >&2\nexit 3\n"),
			ProblemNoHandshake, []string{"no such file: state.db"}},
		{"shscript", writeScript(t, dir, "plugin.sh", "#!/bin/sh\necho 'This binary is a plugin. These are not meant to be executed directly.' >&2\nexit 1\n"),
			ProblemWrongCookie, []string{"another magic cookie", "PROTOCOL.md#handshake"}},
	}
	if falseBin != "" {
		cases = append(cases, struct {
			name, path, problem string
			want                []string
		}{"native", falseBin, ProblemNoHandshake, []string{"PROTOCOL.md#handshake"}})
	}
	var plugs []plug
	for _, c := range cases {
		plugs = append(plugs, plug{c.name, entry(c.path)})
	}
	_, errs := start(t, configOf(plugs...), fastOptions())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantProblem(t, findErr(errs, c.name), c.problem, c.want, goAdvice)
		})
	}
}

// A script saved with a byte-order mark (Notepad's UTF-8) begins with
// EF BB BF before its #!, so the kernel does not see the #! line: the
// error names the mark, as it names a carriage return, not a missing #!.
func TestByteOrderMarkBeforeTheShebangIsNamed(t *testing.T) {
	t.Parallel()
	path := writeScript(t, t.TempDir(), "bom.py", "\xef\xbb\xbf#!/usr/bin/python3\nimport sys\n")
	_, errs := start(t, configOf(plug{"bom", entry(path)}), fastOptions())
	wantProblem(t, findErr(errs, "bom"), ProblemInterpreterMissing, []string{"byte order mark", "before its #! line", "PROTOCOL.md#environment"}, goAdvice)
	if e := findErr(errs, "bom"); e != nil && strings.Contains(e.Reason, "has no #! line") {
		t.Errorf("the script is said to have no #! line: %v", e)
	}
}

// A missing script is still a script: its name says Python or
// JavaScript, and its fix is not to build it with make plugins, the
// repository's target for its Go plugins.
func TestMissingScriptGetsNoGoBuildAdvice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := map[string]string{"pyguard": filepath.Join(dir, "pyguard.py"), "tscache": filepath.Join(dir, "dist", "main.js")}
	var plugs []plug
	for name, path := range cases {
		plugs = append(plugs, plug{name, entry(path)})
	}
	_, errs := start(t, configOf(plugs...), fastOptions())
	for name := range cases {
		e := findErr(errs, name)
		if e == nil {
			t.Fatalf("%s started", name)
		}
		if strings.Contains(e.Fix, "make plugins") || !strings.Contains(e.Error(), "script "+cases[name]+" does not exist") {
			t.Errorf("%s: a missing script gets Go build advice, or is not called a script: %v", name, e)
		}
	}
}

// A Python traceback through requests' cookies module, from a script
// under a plugins directory, says "cookie" and "plugin", but it is a
// crash, not a plugin refusing a host without its magic cookie: it is
// named no-handshake, and its stderr, where the cause is, is quoted.
func TestACrashMentioningCookiesIsNotAWrongCookie(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "plugins")
	path := writeScriptIn(t, dir, "weather.py", `#!/bin/sh
cat >&2 <<'TRACE'
Traceback (most recent call last):
  File "/srv/hookhost/plugins/weather.py", line 3, in <module>
    import requests
  File "/usr/lib/python3/dist-packages/requests/__init__.py", line 147, in <module>
    from . import packages, utils
  File "/usr/lib/python3/dist-packages/requests/utils.py", line 24, in <module>
    from .cookies import RequestsCookieJar, cookiejar_from_dict
ModuleNotFoundError: No module named 'charset_normalizer'
TRACE
exit 1
`)
	_, errs := start(t, configOf(plug{"weather", entry(path)}), fastOptions())
	e := findErr(errs, "weather")
	if e == nil {
		t.Fatal("started")
	}
	t.Log(e)
	if e.Problem != ProblemNoHandshake {
		t.Errorf("a crash was named %s, want %s", e.Problem, ProblemNoHandshake)
	}
	if !strings.Contains(e.Error(), "charset_normalizer") {
		t.Errorf("the error drops the plugin's own account of its crash: %v", e)
	}
	// What a plugin refusing to run says, in go-plugin's words or its own.
	for _, refusal := range []string{
		"This binary is a plugin. These are not meant to be executed directly.",
		"handmade: not started by hookhost (no magic cookie); this is a plugin",
		"error: HOOKHOST_PLUGIN cookie not set",
		"Error: wrong cookie, expected MAGIC",
	} {
		if exitFinding("p", entry("/nowhere"), refusal, language{}) == nil {
			t.Errorf("%q is not taken for a plugin's refusal", refusal)
		}
	}
}

// writeScriptIn writes an executable script into dir, made if need be.
func writeScriptIn(t *testing.T, dir, name, text string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return writeScript(t, dir, name, text)
}

// pythonFor returns Debian's python3, skipping the test without it, but
// failing it under CI, which installs it.
func pythonFor(t *testing.T) string {
	t.Helper()
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		testenv.Skip(t, python+" is not installed", "sudo apt-get install python3", err)
	}
	return python
}

// A Python plugin that prints its handshake line without flushing it:
// stdout to a pipe is block-buffered in Python, so the host never sees
// the line; the probe reruns it on a terminal and finds it.
func TestUnflushedPythonHandshake(t *testing.T) {
	t.Parallel()
	python := pythonFor(t)
	path := writeScript(t, t.TempDir(), "slowpy", "#!"+python+`
import sys, time
print("1|2|unix|/tmp/hookhost-test-nowhere.sock|grpc|")
time.sleep(60)
`)
	opts := fastOptions()
	opts.StartTimeout = 2 * time.Second
	_, errs := start(t, configOf(plug{"slowpy", entry(path)}), opts)
	wantProblem(t, findErr(errs, "slowpy"), ProblemUnflushed,
		[]string{"never flushed", "flush=True", "hookhost-plugin", "PROTOCOL.md#handshake"}, goAdvice)
	waitFor(t, "no process of the script left", func() bool { return !scriptRuns(path) })
}

// A Python plugin that prints its handshake line on stdout without
// flushing it, and echoes it on stderr to see it while debugging, is told
// it did not flush it, not that it printed it on stderr.
func TestUnflushedLineEchoedOnStderrIsNamedUnflushed(t *testing.T) {
	t.Parallel()
	python := pythonFor(t)
	path := writeScript(t, t.TempDir(), "echoing", "#!"+python+`
import sys, time
line = "1|2|unix|/tmp/hookhost-nowhere.sock|grpc|"
print(line)
print(line, file=sys.stderr)
time.sleep(60)
`)
	opts := fastOptions()
	opts.StartTimeout = 2 * time.Second
	_, errs := start(t, configOf(plug{"echoing", entry(path)}), opts)
	e := findErr(errs, "echoing")
	if e == nil {
		t.Fatal("started")
	}
	t.Log(e)
	if e.Problem != ProblemUnflushed {
		t.Errorf("problem %q, want %s: the line was printed on stdout, and not flushed", e.Problem, ProblemUnflushed)
	}
}

// scriptRuns reports whether a live process has path among its
// arguments, as an interpreter running the script at path has.
func scriptRuns(path string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && slices.Contains(strings.Split(string(cmdline), "\x00"), path) && !gone(pid) {
			return true
		}
	}
	return false
}

// A script plugin that works, but through #!/usr/bin/env without PATH,
// and pinned by sha256: Check passes it with both warnings. It wraps the
// hand-written plugin, so it is a real plugin.
func TestCheckWarnsOfScriptPinAndEnvShebang(t *testing.T) {
	t.Parallel()
	if _, found := inDefaultPath("sh"); !found {
		t.Skip("no sh in /bin or /usr/bin")
	}
	bin := handmadeAs(t, "good-wrapped")
	path := writeScript(t, t.TempDir(), "wrapped", "#!/usr/bin/env sh\nexec "+bin+"\n")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	e := entry(path)
	e.SHA256 = hex.EncodeToString(sum[:])
	results := Check(context.Background(), Specs(configOf(plug{"good-wrapped", e})), fastOptions())
	r := results[0]
	if !r.OK {
		t.Fatalf("not OK: %v", r.Err)
	}
	got := map[string]Warning{}
	for _, w := range r.Warnings {
		got[w.Problem] = w
		t.Log(w)
	}
	if len(r.Warnings) != 2 {
		t.Errorf("warnings = %+v, want script-pin and env-shebang", r.Warnings)
	}
	if w := got[ProblemScriptPin]; !strings.Contains(w.Reason, "interpreter sh ") || !strings.Contains(w.Reason, "imports") {
		t.Errorf("script pin warning = %+v", w)
	}
	if w := got[ProblemEnvShebang]; !strings.Contains(w.Reason, "default /bin:/usr/bin") || !strings.Contains(w.Fix, "#!/") {
		t.Errorf("env shebang warning = %+v", w)
	}
	for _, w := range r.Warnings {
		for _, a := range goAdvice {
			if strings.Contains(w.Fix, a) {
				t.Errorf("a shell script's fix mentions %q: %s", a, w.Fix)
			}
		}
	}
}

// go-plugin logs a JSON stderr line whose @level it does not know
// ("warning", what Python's levelname gives lowercased) or that has none
// (pino's numeric "level") at DEBUG, as PROTOCOL.md says, so the plugin's
// warnings are hidden at the default level: Check warns of them, and not
// of a JSON line at a level hclog knows.
func TestCheckWarnsOfJSONLinesLoggedAtDebug(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		line   string
		hidden bool
	}{
		"good-pywarning": {`{"@level":"warning","@message":"policy file missing, allowing everything"}`, true},
		"good-pino":      {`{"level":40,"time":1763900000000,"msg":"policy file missing, allowing everything"}`, true},
		"good-hclog":     {`{"@level":"WARN","@message":"policy file missing, allowing everything"}`, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bin := handmadeAs(t, name)
			path := writeScript(t, t.TempDir(), "wrapped", "#!/bin/sh\necho '"+c.line+"' >&2\nexec "+bin+"\n")
			var log syncbuf.Buffer
			opts := fastOptions()
			opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "check", Level: hclog.Warn, Output: &log})
			r := Check(context.Background(), Specs(configOf(plug{name, entry(path)})), opts)[0]
			if !r.OK {
				t.Fatalf("not OK: %v", r.Err)
			}
			if shown := strings.Contains(log.String(), "policy file missing"); shown == c.hidden {
				t.Fatalf("the line reached the log at WARN: %v, want %v:\n%s", shown, !c.hidden, log.String())
			}
			warned := false
			for _, w := range r.Warnings {
				warned = warned || w.Problem == ProblemPlainStderr
			}
			if warned != c.hidden {
				t.Errorf("the plugin's warning %s, logged at DEBUG only: %v, got warnings %+v", c.line, c.hidden, r.Warnings)
			}
		})
	}
}

// The language is read from the #! line first, then the file name, then
// a Go binary's build information.
func TestDetectLanguage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		file, text string
		want       langKind
	}{
		{"a", "#!/usr/bin/python3.11\n", langPython},
		{"b", "#!/usr/bin/env -S python3 -u\n", langPython},
		{"c", "#!/usr/bin/env -S node --enable-source-maps\n", langJS},
		{"d", "#!/usr/local/bin/deno run -A\n", langJS},
		{"e.py", "#!/bin/sh\n", langPython},
		{"f", "#!/bin/sh\n", langScript},
		{"g.ts", "export {}\n", langJS},
		{"h.cjs", "#!/usr/bin/env bun\n", langJS},
		{"i", "\x7fELF\x00\x00", langNative},
	}
	for _, c := range cases {
		if got := detectLanguage(writeScript(t, dir, c.file, c.text)); got.kind != c.want {
			t.Errorf("%s %q: %v, want %v", c.file, c.text, got.kind, c.want)
		}
	}
	if got := detectLanguage(bins.echo); got.kind != langGo || !got.hookhost {
		t.Errorf("the echo test plugin: %+v, want Go built against hookhost", got)
	}
}

// A plugin that pads its certificate's base64 passes the starts where the
// DER length is a multiple of 3. Check starts it again to read more
// handshake lines; here its first start is lucky and the others are not,
// so the check's own start passes and the reruns catch it.
func TestCheckCatchesPaddingThatPassedOnce(t *testing.T) {
	t.Parallel()
	path := handmadeAs(t, "luckypad")
	r := Check(context.Background(), Specs(configOf(plug{"luckypad", entry(path)})), fastOptions())[0]
	if r.OK || r.Err == nil {
		t.Fatalf("check passed a plugin that pads: %+v", r)
	}
	wantProblem(t, r.Err, ProblemPaddedBase64, []string{"padded base64", "not a multiple of 3", "another start of it printed", "PROTOCOL.md#automtls"}, nil)
	starts, err := os.ReadFile(filepath.Join(filepath.Dir(path), "luckypad.starts"))
	if err != nil || len(starts) < 2 {
		t.Fatalf("the plugin counted %d starts (%v), want the check's and its reruns'", len(starts), err)
	}
	waitFor(t, "no process of the plugin left", func() bool { return len(processesOf(path)) == 0 })
}

// The host resolves a relative unix socket path against the plugin's
// working directory, here not the host's, so a plugin that prints one
// starts every time: Check, its reruns included, passes it, with a
// warning that PROTOCOL.md asks for an absolute path.
func TestCheckPassesARelativeSocketPathWithAWarning(t *testing.T) {
	t.Parallel()
	path := oneMistakeAs(t, "relsock")
	e := entry(path)
	e.Dir = t.TempDir()
	cfg := configOf(plug{"relsock", e})
	for i := range 3 {
		h := startOK(t, cfg, fastOptions())
		if len(h.Members()) != 1 {
			t.Fatalf("start %d: not running", i)
		}
		if err := h.Close(context.Background()); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	r := Check(context.Background(), Specs(cfg), fastOptions())[0]
	if !r.OK {
		t.Fatalf("Check failed a plugin that started 3 times out of 3: %v", r.Err)
	}
	if len(r.Warnings) != 1 || r.Warnings[0].Problem != ProblemAddress || !strings.Contains(r.Warnings[0].Reason, "relative") {
		t.Errorf("warnings %+v, want one %s about the relative path", r.Warnings, ProblemAddress)
	}
}

// Check with NoProbes starts a plugin once and looks no further: a plugin
// whose reruns would fail it (luckypad pads its certificate at every start
// but the first) passes, without warnings, as plugins list needs.
func TestCheckWithoutProbesStartsEachPluginOnce(t *testing.T) {
	t.Parallel()
	path := handmadeAs(t, "luckypad")
	opts := fastOptions()
	opts.NoProbes = true
	r := Check(context.Background(), Specs(configOf(plug{"luckypad", entry(path)})), opts)[0]
	if !r.OK || len(r.Warnings) != 0 || r.Version == "" {
		t.Fatalf("Check without probes: %+v, want OK with its manifest and no warnings", r)
	}
	starts, err := os.ReadFile(filepath.Join(filepath.Dir(path), "luckypad.starts"))
	if err != nil || len(starts) != 1 {
		t.Errorf("the plugin counted %d starts (%v), want 1", len(starts), err)
	}
	waitFor(t, "no process of the plugin left", func() bool { return len(processesOf(path)) == 0 })
}

// The plugins Check kills on purpose, one whose start failed and one
// without a controller, leave no complaint of go-plugin's about the kill
// at WARN or above beside Check's own account of them.
func TestCheckKillsQuietly(t *testing.T) {
	t.Parallel()
	var log syncbuf.Buffer
	opts := fastOptions()
	opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "check", Level: hclog.Warn, Output: &log})
	results := Check(context.Background(), Specs(configOf(
		plug{"nocontroller", entry(handmadeAs(t, "nocontroller"))},
		plug{"nocert", entry(handmadeAs(t, "nocert"))},
	)), opts)
	if !results[0].OK || results[1].OK {
		t.Fatalf("results %+v, want nocontroller OK and nocert failed", results)
	}
	for _, noise := range []string{"failed to exit gracefully", "plugin process exited", "signal: killed"} {
		if strings.Contains(log.String(), noise) {
			t.Errorf("the log has %q:\n%s", noise, log.String())
		}
	}
}

// The probes reach a plugin where go-plugin does: a relative socket path is
// taken from the plugin's working directory, the config file's folder, so
// a plugin serving without client certificates there is still found out.
func TestCheckProbesARelativeSocketPathInThePluginsDirectory(t *testing.T) {
	t.Parallel()
	e := entry(handmadeAs(t, "relnoclientauth"))
	e.Dir = t.TempDir()
	r := Check(context.Background(), Specs(configOf(plug{"relnoclientauth", e})), fastOptions())[0]
	if !r.OK {
		t.Fatalf("Check: %v", r.Err)
	}
	var problems []string
	for _, w := range r.Warnings {
		problems = append(problems, w.Problem)
	}
	if !slices.Contains(problems, ProblemAddress) || !slices.Contains(problems, ProblemClientCertNotRequired) {
		t.Errorf("warnings %+v, want %s (relative path) and %s", r.Warnings, ProblemAddress, ProblemClientCertNotRequired)
	}
}
