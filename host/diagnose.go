package host

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"debug/elf"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/plugins/handshake"
)

// Problems a StartError or a Warning can name, for plugin authors in any
// language: each is one way to get the plugin protocol wrong, and has a
// section in PROTOCOL.md. They are stable names that tools may test for;
// the texts that go with them are for people.
const (
	// The plugin printed something else than a handshake line on stdout.
	ProblemStdout = "stdout-not-handshake"
	// It printed no handshake line before it exited.
	ProblemNoHandshake = "no-handshake"
	// It did not print its handshake line within the start timeout.
	ProblemHandshakeTimeout = "handshake-timeout"
	// Its handshake line was printed into a buffered pipe and never
	// flushed: run with stdout on a terminal, it arrives.
	ProblemUnflushed = "unflushed-handshake"
	// It printed its handshake line on stderr instead of stdout.
	ProblemHandshakeOnStderr = "handshake-on-stderr"
	// Its handshake line has too few |-separated fields.
	ProblemHandshakeFields = "handshake-fields"
	// The line's 1st field is not go-plugin's core protocol version, 1.
	ProblemCoreProtocol = "core-protocol"
	// The line's 2nd field is not a plugin protocol version this host
	// speaks (or the one the entry pins).
	ProblemAppProtocol = "app-protocol"
	// The line's 3rd field is neither unix nor tcp.
	ProblemNetwork = "network"
	// The line's 4th field is not an address of that network, or (a
	// warning of Check) a relative unix socket path.
	ProblemAddress = "address"
	// The line's 5th field is not grpc.
	ProblemNotGRPC = "not-grpc"
	// The certificate in the 6th field is base64 with = padding, which
	// go-plugin rejects, and only when the DER is not a multiple of 3
	// bytes long: such a plugin fails some starts and passes others.
	ProblemPaddedBase64 = "padded-base64"
	// The 6th field is not unpadded standard base64 (PEM, the URL-safe
	// alphabet, ...).
	ProblemCertEncoding = "cert-encoding"
	// The 6th field decodes, but not to a DER X.509 certificate.
	ProblemCertNotX509 = "cert-not-x509"
	// There is no 6th field: the host cannot trust the plugin's TLS
	// certificate ("certificate signed by unknown authority").
	ProblemNoCertField = "no-cert-field"
	// The plugin serves without TLS.
	ProblemNoTLS = "no-tls"
	// A TLS handshake with the plugin failed for another reason.
	ProblemTLS = "tls-handshake"
	// The plugin's server presents another certificate than the one in
	// its handshake line.
	ProblemCertMismatch = "cert-not-the-lines"
	// The plugin's certificate is not valid for the name localhost.
	ProblemCertSAN = "cert-not-localhost"
	// The plugin's certificate's extended key usage leaves out server
	// authentication.
	ProblemCertUsage = "cert-key-usage"
	// The plugin's certificate is expired or not valid yet.
	ProblemCertExpired = "cert-expired"
	// The plugin's server refused the host's client certificate, the one
	// in PLUGIN_CLIENT_CERT.
	ProblemClientCertRejected = "client-cert-rejected"
	// The plugin's server accepts connections without a client
	// certificate (a warning of Check).
	ProblemClientCertNotRequired = "client-cert-not-required"
	// The plugin exited because it looks for another magic cookie.
	ProblemWrongCookie = "wrong-cookie"
	// The plugin runs without the magic cookie (a warning of Check).
	ProblemCookieNotChecked = "cookie-not-checked"
	// The interpreter on a script's #! line, or a binary's dynamic loader,
	// does not exist.
	ProblemInterpreterMissing = "interpreter-missing"
	// A script's #! line runs its interpreter through env, which looks it
	// up in a PATH the plugin does not get.
	ProblemEnvShebang = "env-shebang"
	// The plugin does not serve go-plugin's controller, so every
	// shutdown waits 2 s and ends in SIGKILL (a warning of Check).
	ProblemNoController = "no-controller"
	// The plugin answers Shutdown but does not exit within the 2 s the
	// host waits, so it is SIGKILLed (a warning of Check).
	ProblemNoExitAfterShutdown = "no-exit-after-shutdown"
	// The plugin wrote stderr lines that are neither hclog JSON with a
	// level hclog knows nor marked with a level, which the host logs at
	// DEBUG only (a warning of Check).
	ProblemPlainStderr = "plain-stderr"
	// The entry's sha256 pins a script, not its interpreter or what it
	// imports (a warning of Check).
	ProblemScriptPin = "script-pin"
	// The plugin does not serve hookhost's plugin service, or go-plugin's
	// health service.
	ProblemService = "plugin-service"
	// The plugin receives variables from its entry's env list and stays
	// dumpable, so every other process of its user, other plugins
	// included, reads them in /proc/<pid>/environ (a warning of Check).
	ProblemDumpable = "dumpable-with-secrets"
)

// Warning is something Check found that does not stop a plugin from
// working, but costs or risks something the operator should know about.
type Warning struct {
	Problem string // one of the Problem constants
	Reason  string // what is wrong, and what it costs
	Fix     string // how to fix it
}

// String formats the warning as "REASON (fix: FIX)".
func (w Warning) String() string {
	if w.Fix == "" {
		return w.Reason
	}
	return fmt.Sprintf("%s (fix: %s)", w.Reason, w.Fix)
}

// finding is one mistake a diagnosis named: the Problem, what it is, and
// the part of its fix specific to it; the language's advice and the
// PROTOCOL.md section are added when it becomes an error or a warning.
type finding struct {
	problem string
	reason  string
	fix     string // may be empty
	section string // PROTOCOL.md section that covers it
}

// fixFor makes a finding a fix text for a plugin in lang.
func (f *finding) fixFor(lang language) string {
	how := lang.howTo(f.section)
	if f.fix == "" {
		return how
	}
	return f.fix + "; " + how
}

func (f *finding) startErr(name string, cause error, lang language) *StartError {
	e := startErr(name, cause, f.fixFor(lang), "%s", f.reason)
	e.Problem = f.problem
	return e
}

func (f *finding) warning(lang language) Warning {
	return Warning{Problem: f.problem, Reason: f.reason, Fix: f.fixFor(lang)}
}

// handshakeShape is the handshake line as PROTOCOL.md spells it.
const handshakeShape = "CORE-PROTOCOL|APP-PROTOCOL|NETWORK|ADDRESS|grpc|CERTIFICATE, e.g. 1|2|unix|/tmp/plugin123/plugin.sock|grpc|MIIB..."

// checkLine reads a handshake line the way go-plugin v1.8 does (client.go,
// Start and loadServerCert) and names the first mistake in it, nil when
// the host can parse it. The app protocol version is only checked to be a
// number: which versions are accepted depends on the entry.
func checkLine(line string, lang language) *finding {
	line = strings.TrimSpace(line)
	parts := strings.Split(line, "|")
	if len(parts) < 4 {
		return &finding{problem: ProblemHandshakeFields, section: secHandshake,
			reason: fmt.Sprintf("printed a handshake line with %d |-separated fields, %q; it needs 6: %s", len(parts), shortLine(line), handshakeShape)}
	}
	if parts[0] != strconv.Itoa(plugin.CoreProtocolVersion) {
		return &finding{problem: ProblemCoreProtocol, section: secHandshake,
			reason: fmt.Sprintf("the 1st field of its handshake line (go-plugin's core protocol version) is %q; it must be %d", parts[0], plugin.CoreProtocolVersion)}
	}
	if _, err := strconv.Atoi(parts[1]); err != nil {
		return &finding{problem: ProblemAppProtocol, section: secVersions,
			reason: fmt.Sprintf("the 2nd field of its handshake line (the plugin protocol version) is %q, not a number; this host speaks %s", parts[1], versionsText(spoken()))}
	}
	switch parts[2] {
	case "unix":
		// Any path works, a relative one against the plugin's working
		// directory (see socketFromDir and relativeSocketFinding).
	case "tcp":
		if _, err := net.ResolveTCPAddr("tcp", parts[3]); err != nil {
			return &finding{problem: ProblemAddress, section: secHandshake,
				reason: fmt.Sprintf("the 4th field of its handshake line (the address) is %q, not a tcp HOST:PORT: %v", parts[3], err)}
		}
	default:
		return &finding{problem: ProblemNetwork, section: secHandshake,
			reason: fmt.Sprintf("the 3rd field of its handshake line (the network) is %q; it must be unix (in PLUGIN_UNIX_SOCKET_DIR) or tcp", parts[2])}
	}
	if len(parts) < 5 {
		return &finding{problem: ProblemNotGRPC, section: secHandshake,
			reason: fmt.Sprintf("its handshake line %q has no 5th field (the protocol), which go-plugin then takes for net/rpc; it must be grpc", shortLine(line))}
	}
	if parts[4] != string(plugin.ProtocolGRPC) {
		return &finding{problem: ProblemNotGRPC, section: secHandshake,
			reason: fmt.Sprintf("the 5th field of its handshake line (the protocol) is %q; hookhost plugins speak gRPC: it must be grpc", parts[4])}
	}
	if len(parts) < 6 || len(parts[5]) <= 50 {
		// go-plugin ignores a 6th field of 50 characters or fewer.
		reason := "its handshake line has no 6th field, the plugin's TLS certificate, so the host cannot trust the certificate its server presents (TLS reports \"certificate signed by unknown authority\")"
		if len(parts) >= 6 && parts[5] != "" {
			reason = fmt.Sprintf("the 6th field of its handshake line, %q, is too short to be a certificate (go-plugin ignores one of 50 characters or fewer), so the host cannot trust the certificate its server presents (TLS reports \"certificate signed by unknown authority\")", parts[5])
		}
		return &finding{problem: ProblemNoCertField, section: secAutoMTLS, reason: reason,
			fix: "append |CERT to the handshake line, where CERT is the server certificate's DER in standard base64 without = padding"}
	}
	return checkCertField(parts[5], lang)
}

// relativeSocketFinding warns of a handshake line whose unix socket path
// is relative: the host resolves it against the plugin's working
// directory, so it works, but PROTOCOL.md asks for an absolute path, which
// other go-plugin hosts need.
func relativeSocketFinding(line string) *finding {
	parts := strings.Split(strings.TrimSpace(line), "|")
	if len(parts) < 4 || parts[2] != "unix" || filepath.IsAbs(parts[3]) {
		return nil
	}
	return &finding{problem: ProblemAddress, section: secHandshake,
		reason: fmt.Sprintf("the 4th field of its handshake line (the address) is %q, a path relative to its working directory: hookhost finds the socket there, but other go-plugin hosts look in their own working directory", parts[3]),
		fix:    "print the socket's absolute path, in PLUGIN_UNIX_SOCKET_DIR"}
}

// checkCertField names what is wrong with the certificate field of a
// handshake line, nil when go-plugin accepts it.
func checkCertField(field string, lang language) *finding {
	der, err := base64.RawStdEncoding.DecodeString(field)
	if err != nil {
		trimmed := strings.TrimRight(field, "=")
		if _, rerr := base64.RawStdEncoding.DecodeString(trimmed); rerr == nil && trimmed != field {
			return &finding{problem: ProblemPaddedBase64, section: secAutoMTLS,
				reason: fmt.Sprintf("the certificate in its handshake line is padded base64 (it ends in %q): go-plugin reads unpadded standard base64 and refuses it (%v). "+
					"Padding is there only when the certificate's DER length is not a multiple of 3, so a plugin that makes a new certificate at each start passes some starts and fails others, a restart included",
					field[len(trimmed):], err),
				fix: unpadFix(lang)}
		}
		switch {
		case strings.HasPrefix(field, "-----BEGIN"):
			return &finding{problem: ProblemCertEncoding, section: secAutoMTLS,
				reason: "the 6th field of its handshake line is PEM; it must be the certificate's DER in standard base64 without padding, on the same line",
				fix:    "print the base64 of the DER bytes, not the PEM text"}
		case strings.ContainsAny(field, "-_"):
			return &finding{problem: ProblemCertEncoding, section: secAutoMTLS,
				reason: fmt.Sprintf("the certificate in its handshake line uses the URL-safe base64 alphabet (- and _); go-plugin reads the standard one (+ and /): %v", err),
				fix:    "encode the DER with standard base64 (+ and /), without = padding"}
		}
		return &finding{problem: ProblemCertEncoding, section: secAutoMTLS,
			reason: fmt.Sprintf("the certificate in its handshake line is not standard unpadded base64: %v", err),
			fix:    "encode the certificate's DER with standard base64, without = padding"}
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return &finding{problem: ProblemCertNotX509, section: secAutoMTLS,
			reason: fmt.Sprintf("the 6th field of its handshake line decodes, but not to a DER X.509 certificate: %v", err),
			fix:    "put the DER of the TLS server certificate there, the bytes PEM wraps"}
	}
	if err := cert.VerifyHostname("localhost"); err != nil {
		return &finding{problem: ProblemCertSAN, section: secAutoMTLS,
			reason: fmt.Sprintf("its TLS certificate is not valid for localhost, the name the host connects with (%v)", err),
			fix:    "give the certificate a DNS subject alternative name \"localhost\""}
	}
	if len(cert.ExtKeyUsage) > 0 && !slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageServerAuth) &&
		!slices.Contains(cert.ExtKeyUsage, x509.ExtKeyUsageAny) {
		return &finding{problem: ProblemCertUsage, section: secAutoMTLS,
			reason: "its TLS certificate's extended key usage does not include server authentication, so the host refuses it as a server's (x509: certificate specifies an incompatible key usage)",
			fix:    "add server auth to the certificate's extended key usage, or leave the extension out"}
	}
	now := time.Now()
	if now.Before(cert.NotBefore) || now.After(cert.NotAfter) {
		return &finding{problem: ProblemCertExpired, section: secAutoMTLS,
			reason: fmt.Sprintf("its TLS certificate is valid only from %s to %s", cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339)),
			fix:    "make a new certificate at each start, valid from a little before now"}
	}
	return nil
}

// unpadFix says how to drop base64 padding in the plugin's language.
func unpadFix(lang language) string {
	switch lang.kind {
	case langPython:
		return `strip the trailing "=" characters: base64.b64encode(der).rstrip(b"=")`
	case langJS:
		return `strip the trailing "=" characters: der.toString("base64").replace(/=+$/, "")`
	case langGo:
		return "encode with base64.RawStdEncoding"
	}
	return `strip the trailing "=" characters from the base64 of the DER`
}

// tlsFinding explains why the first call to a plugin whose handshake line
// was accepted failed, from the line and the error, nil if neither points
// at TLS. probePlain, if not nil, reports whether the plugin answers gRPC
// without TLS.
func tlsFinding(line string, err error, lang language, probePlain func() bool) *finding {
	msg := err.Error()
	if f := checkLine(line, lang); f != nil {
		if f.problem == ProblemNoCertField && probePlain != nil && probePlain() {
			return &finding{problem: ProblemNoTLS, section: secAutoMTLS,
				reason: "it serves gRPC without TLS; the host connects with TLS only, with the certificate from the 6th field of the handshake line",
				fix:    "serve with TLS: a certificate for localhost, printed in the handshake line's 6th field, and the PEM in PLUGIN_CLIENT_CERT as the only client CA, client certificates required"}
		}
		return f
	}
	switch {
	case strings.Contains(msg, "remote error: tls:"):
		return &finding{problem: ProblemClientCertRejected, section: secAutoMTLS,
			reason: fmt.Sprintf("its TLS server refused the host's client certificate: %s", tlsDetail(msg)),
			fix:    "trust the PEM certificate in PLUGIN_CLIENT_CERT as the client CA (and only it), and require client certificates"}
	case strings.Contains(msg, "first record does not look like a TLS handshake"),
		strings.Contains(msg, "tls:"), strings.Contains(msg, "x509:"),
		strings.Contains(msg, "authentication handshake failed"):
		return &finding{problem: ProblemTLS, section: secAutoMTLS,
			reason: fmt.Sprintf("the TLS handshake with it failed: %s", tlsDetail(msg))}
	}
	return nil
}

// tlsDetail is the part of a connection error that says what TLS found,
// without the escaping of the quotes gRPC adds.
func tlsDetail(msg string) string {
	msg = strings.ReplaceAll(msg, `\"`, `"`)
	for _, marker := range []string{"remote error: ", "tls: ", "x509: ", "authentication handshake failed: "} {
		if i := strings.Index(msg, marker); i >= 0 {
			return strings.TrimRight(msg[i:], `"`)
		}
	}
	return msg
}

// servedCertFinding compares the certificate the plugin's server presents
// with the one its handshake line carries, which is the only one the host
// trusts; nil when they are the same or the server cannot be asked.
func servedCertFinding(ctx context.Context, addr net.Addr, line string, cfg *tls.Config, timeout time.Duration) *finding {
	parts := strings.Split(strings.TrimSpace(line), "|")
	if len(parts) < 6 {
		return nil
	}
	printed, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil {
		return nil
	}
	served := servedCert(ctx, addr, cfg, timeout)
	if served == nil || bytes.Equal(served, printed) {
		return nil
	}
	return &finding{problem: ProblemCertMismatch, section: secAutoMTLS,
		reason: "its TLS server presents another certificate than the one in its handshake line, the only one the host trusts, so TLS reports \"certificate signed by unknown authority\"",
		fix:    "print in the handshake line the DER of the very certificate the server is given (make it once, and use it for both)"}
}

// goPluginRefusal is what go-plugin's Serve prints when it was not given
// its host's magic cookie; any plugin built on it for another program says
// this when hookhost starts it.
const goPluginRefusal = "This binary is a plugin"

// exitFinding explains a plugin that exited before its handshake line
// from its stderr and its #! line, nil when neither says why.
func exitFinding(name string, entry config.PluginEntry, stderr string, lang language) *finding {
	if prog := envProgram(lang.interp); prog != "" && !slices.Contains(entry.Env, "PATH") {
		// env says "env: 'python3': No such file or directory"; a found
		// interpreter whose program failed is not env's doing.
		if _, found := inDefaultPath(prog); !found || (strings.Contains(stderr, "env: ") && strings.Contains(stderr, prog) && strings.Contains(stderr, "No such file")) {
			return envShebangFinding(name, prog, lang, true)
		}
	}
	if strings.Contains(stderr, goPluginRefusal) || saysCookie(stderr) {
		return &finding{problem: ProblemWrongCookie, section: secHandshake,
			reason: fmt.Sprintf("exited before its handshake, saying it was not started by its host: it looks for another magic cookie than hookhost's %s=%s, so it is a plugin for another program, or checks the wrong variable or value",
				handshake.Config.MagicCookieKey, handshake.Config.MagicCookieValue),
			fix: fmt.Sprintf("if it is not a hookhost plugin, correct plugins.entries.%s.path; if it is, have it check %s=%s", name, handshake.Config.MagicCookieKey, handshake.Config.MagicCookieValue)}
	}
	return nil
}

// saysCookie reports whether a line of stderr speaks of a magic cookie:
// "magic cookie", or "cookie" with "magic" or hookhost's cookie variable
// on the same line. A crash that merely mentions a cookie, as a traceback
// through an HTTP library's cookies module does, is not a refusal.
func saysCookie(stderr string) bool {
	for _, line := range strings.Split(strings.ToLower(stderr), "\n") {
		if strings.Contains(line, "cookie") && (strings.Contains(line, "magic") ||
			strings.Contains(line, strings.ToLower(handshake.Config.MagicCookieKey))) {
			return true
		}
	}
	return false
}

// envShebangFinding explains a #!/usr/bin/env line: as the reason a
// script failed, or, when it worked, as a warning that it works only by
// luck.
func envShebangFinding(name, prog string, lang language, failed bool) *finding {
	path, found := inDefaultPath(prog)
	var reason string
	switch {
	case failed:
		reason = fmt.Sprintf("its #! line runs %s through env, which looks it up in PATH; plugins get no PATH (only the variables plugins.entries.%s.env lists), and env found no %s in its default /bin:/usr/bin", prog, name, prog)
	case found:
		reason = fmt.Sprintf("its #! line runs %s through env, which looks it up in PATH; plugins get no PATH, so env finds %s only because its default /bin:/usr/bin holds one: not the %s of a virtualenv, nvm or /usr/local", prog, path, prog)
	}
	fix := fmt.Sprintf("name the interpreter by its absolute path on the #! line (`command -v %s` prints it), or add \"PATH\" to plugins.entries.%s.env", prog, name)
	if path != "" {
		fix = fmt.Sprintf("name the interpreter by its absolute path on the #! line (e.g. #!%s), or add \"PATH\" to plugins.entries.%s.env", path, name)
	}
	return &finding{problem: ProblemEnvShebang, section: secEnvironment, reason: reason, fix: fix}
}

// envProgram is the program a #! line runs through env, "" if it does
// not use env.
func envProgram(interp []string) string {
	if len(interp) < 2 || filepath.Base(interp[0]) != "env" {
		return ""
	}
	for _, w := range interp[1:] {
		if strings.HasPrefix(w, "-") || strings.Contains(w, "=") {
			continue
		}
		return w
	}
	return ""
}

// inDefaultPath looks prog up where env (glibc's execvp) does when there
// is no PATH.
func inDefaultPath(prog string) (string, bool) {
	if strings.Contains(prog, "/") {
		_, err := os.Stat(prog)
		return prog, err == nil
	}
	for _, dir := range []string{"/bin", "/usr/bin"} {
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// missingInterpreter explains an exec that failed with ENOENT although the
// file exists: the #! interpreter, or an ELF binary's loader, is missing.
func missingInterpreter(path string, lang language) *finding {
	if lang.isScript() {
		raw := shebangLine(path)
		if strings.HasSuffix(raw, "\r") {
			return &finding{problem: ProblemInterpreterMissing, section: secEnvironment,
				reason: fmt.Sprintf("the #! line of %s ends in a carriage return (Windows line endings), so the system looks for an interpreter whose name ends in one", path),
				fix:    "save the script with Unix line endings (dos2unix " + path + ")"}
		}
		interp := lang.interp[0]
		return &finding{problem: ProblemInterpreterMissing, section: secEnvironment,
			reason: fmt.Sprintf("the interpreter %s named on the #! line of %s does not exist", interp, path),
			fix:    fmt.Sprintf("install it, or put the absolute path of the interpreter to use on the #! line (`command -v %s` prints it)", filepath.Base(interp))}
	}
	if loader := elfInterpreter(path); loader != "" {
		return &finding{problem: ProblemInterpreterMissing, section: secEnvironment,
			reason: fmt.Sprintf("the binary's dynamic loader %s does not exist: it was built for another system or C library", loader),
			fix:    "build the plugin on or for this system, or link it statically"}
	}
	return nil
}

// shebangLine is the first line of a script, without "#!" and "\n".
func shebangLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 512)
	n, _ := f.Read(buf)
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	return strings.TrimPrefix(line, "#!")
}

// scriptPinWarning: a sha256 pin on a script does not pin what runs.
func scriptPinWarning(name string, lang language) *finding {
	interp := lang.interp[0]
	if prog := envProgram(lang.interp); prog != "" {
		interp = prog
	}
	return &finding{problem: ProblemScriptPin, section: secEnvironment,
		reason: fmt.Sprintf("plugins.entries.%s.sha256 pins a script: the checksum covers the script's own text only, not its interpreter %s nor the modules it imports, which can change without the pin noticing", name, interp),
		fix:    "make what the script loads as hard to change as the script itself (owned by another user, read-only), or ship the plugin as a single file, a binary or a bundle"}
}

var errNoPTY = errors.New("no pseudo-terminals on this system")

// elfInterpreter is an ELF binary's dynamic loader (PT_INTERP), "" for a
// static binary or anything else.
func elfInterpreter(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, min(p.Filesz, 4096))
		n, _ := p.ReadAt(b, 0)
		return strings.TrimRight(string(b[:n]), "\x00")
	}
	return ""
}

func problemErr(e *StartError, problem string) *StartError {
	e.Problem = problem
	return e
}

// lineAddr is the address a handshake line names, nil if it names none.
func lineAddr(line string) net.Addr {
	parts := strings.Split(strings.TrimSpace(line), "|")
	if len(parts) < 4 {
		return nil
	}
	switch parts[2] {
	case "unix":
		return &net.UnixAddr{Net: "unix", Name: parts[3]}
	case "tcp":
		if a, err := net.ResolveTCPAddr("tcp", parts[3]); err == nil {
			return a
		}
	}
	return nil
}

// probeTimeout bounds one probe's call to a plugin.
func probeTimeout(opts *Options) time.Duration {
	return min(opts.StartTimeout, 3*time.Second)
}

// staticWarnings are what Check can tell from the entry and the file.
func staticWarnings(name string, entry config.PluginEntry, lang language) []*finding {
	var fs []*finding
	if entry.SHA256 != "" && lang.isScript() {
		fs = append(fs, scriptPinWarning(name, lang))
	}
	if prog := envProgram(lang.interp); prog != "" && !slices.Contains(entry.Env, "PATH") {
		if _, found := inDefaultPath(prog); found {
			fs = append(fs, envShebangFinding(name, prog, lang, false))
		}
	}
	return fs
}

// notSecret are variables an env list commonly names that hold no secret;
// a plugin that receives only these is not warned about being dumpable.
var notSecret = map[string]bool{
	"PATH": true, "HOME": true, "LANG": true, "LANGUAGE": true, "LC_ALL": true, "LC_CTYPE": true,
	"TZ": true, "TMPDIR": true, "TERM": true, "USER": true, "LOGNAME": true, "SHELL": true, "PWD": true,
	"PYTHONPATH": true, "NODE_PATH": true, "VIRTUAL_ENV": true,
}

// dumpableWarning finds a running plugin that receives variables from its
// env list, which may hold its secrets, while any process of its user may
// read them: the SDKs clear the dumpable flag at start, as the host does
// for itself, but a plugin written without them, in Node, or that sets the
// flag again, does not.
func dumpableWarning(name string, entry config.PluginEntry, in *instance) *finding {
	var given []string
	for _, kv := range pluginEnv(entry.Env) {
		if k, _, _ := strings.Cut(kv, "="); !notSecret[k] {
			given = append(given, k)
		}
	}
	if len(given) == 0 || in.pid <= 0 {
		return nil
	}
	if d, known := dumpable(in.pid); !known || !d {
		return nil
	}
	return &finding{problem: ProblemDumpable, section: secEnvironment,
		reason: fmt.Sprintf("it receives %s from plugins.entries.%s.env but is dumpable, so every process of its user, other plugins included, can read them in /proc/%d/environ",
			strings.Join(given, ", "), name, in.pid),
		fix: "have the plugin clear its dumpable flag when it starts (prctl(PR_SET_DUMPABLE, 0); the Go and Python SDKs do), or run it as a user of its own (README: run an untrusted plugin as its own user)"}
}

// clientAuthWarning connects to a running plugin without a client
// certificate, as any local process could.
func clientAuthWarning(ctx context.Context, in *instance, opts *Options) *finding {
	addr := in.addr
	if addr == nil || in.tls == nil || in.tls.RootCAs == nil {
		return nil
	}
	if !answersWithoutClientCert(ctx, addr, in.tls.RootCAs, probeTimeout(opts)) {
		return nil
	}
	return &finding{problem: ProblemClientCertNotRequired, section: secAutoMTLS,
		reason: "its TLS server accepts connections without a client certificate, so any local process that can reach its socket can call its hooks and tools; the host always presents the certificate it passes in PLUGIN_CLIENT_CERT",
		fix:    "require client certificates, with the PEM in PLUGIN_CLIENT_CERT as the only trusted client CA"}
}

// controllerWarning asks a plugin Check is about to stop to shut down
// through go-plugin's controller, which is how the host stops a plugin,
// and waits as long as the host would for it to exit.
func controllerWarning(ctx context.Context, in *instance, opts *Options) *finding {
	gc, ok := in.proto.(*plugin.GRPCClient)
	if !ok {
		return nil
	}
	err := shutdown(ctx, gc.Conn, probeTimeout(opts))
	switch {
	case status.Code(err) == codes.Unimplemented:
		return &finding{problem: ProblemNoController, section: secController,
			reason: "it does not serve go-plugin's controller (plugin.GRPCController/Shutdown is unimplemented), so each time the host stops it, at every shutdown and restart, the host waits 2 s for an exit that does not come and then kills it with SIGKILL, leaving it no chance to clean up",
			fix:    "serve plugin.GRPCController (plugins/proto/goplugin/grpc_controller.proto) with a Shutdown that answers, stops the server and exits"}
	case status.Code(err) == codes.DeadlineExceeded:
		return &finding{problem: ProblemNoExitAfterShutdown, section: secController,
			reason: fmt.Sprintf("it serves go-plugin's controller, but its Shutdown did not answer within %s, so each time the host stops it, at every shutdown and restart, the host waits for it and then kills it with SIGKILL, leaving it no chance to clean up", probeTimeout(opts)),
			fix:    "answer Shutdown at once, then stop the server and exit; a Shutdown handler must not wait on a lock, a stream or a call in progress"}
	case err != nil || in.exited == nil:
		return nil
	}
	t := time.NewTimer(shutdownGrace)
	defer t.Stop()
	select {
	case <-in.exited:
		return nil
	case <-ctx.Done():
		return nil
	case <-t.C:
	}
	return &finding{problem: ProblemNoExitAfterShutdown, section: secController,
		reason: fmt.Sprintf("it answered Shutdown but did not exit within %s, so each time the host stops it, the host waits that long and then kills it with SIGKILL", shutdownGrace),
		fix:    "once Shutdown has answered, stop the server and exit; a thread, timer or stream handler still running keeps the process alive, so exit explicitly if in doubt"}
}

// shutdownGrace is how long go-plugin (v1.8, Client.Kill) waits for a
// plugin to exit after Shutdown before it kills it.
const shutdownGrace = 2 * time.Second

// plainStderrWarning names the first stderr line the host logged at DEBUG
// for want of a level.
func plainStderrWarning(in *instance) *finding {
	if in.run == nil {
		return nil
	}
	line := in.run.plainLine()
	if line == "" {
		return nil
	}
	return &finding{problem: ProblemPlainStderr, section: secStdio,
		reason: fmt.Sprintf("it wrote stderr lines such as %q that are neither hclog JSON nor start with a level like [WARN]: the host logs them at DEBUG, so its warnings and errors are hidden at the default log level (a JSON line's @level must be trace, debug, info, warn or error)", line),
		fix:    "log JSON lines with @level (one of trace, debug, info, warn, error: not \"warning\" nor a number), @message and @timestamp, or start each plain line with [ERROR], [WARN], [INFO] or [DEBUG]"}
}

// cookieWarning runs the plugin again without the magic cookie: one that
// checks it exits at once, saying it is a plugin.
func cookieWarning(ctx context.Context, entry config.PluginEntry, opts *Options) *finding {
	res, err := rerun(ctx, entry.Path, entry, rerunOptions{noCookie: true, wait: min(opts.StartTimeout, maxProbeWait)})
	if err != nil || res.line == "" {
		return nil
	}
	key, value := handshake.Config.MagicCookieKey, handshake.Config.MagicCookieValue
	return &finding{problem: ProblemCookieNotChecked, section: secHandshake,
		reason: fmt.Sprintf("it serves even without the magic cookie %s=%s in its environment (it printed %q): run by hand or by another program, it serves instead of saying that it is a hookhost plugin", key, value, shortLine(res.line)),
		fix:    fmt.Sprintf("before serving, exit with a message on stderr unless %s is %s", key, value)}
}

// shortLine shortens a handshake line for a message: the certificate
// field is long and says nothing to a reader.
func shortLine(line string) string {
	parts := strings.Split(line, "|")
	if len(parts) >= 6 && len(parts[5]) > 16 {
		parts[5] = fmt.Sprintf("%s…(%d characters)", parts[5][:8], len(parts[5]))
	}
	line = strings.Join(parts, "|")
	if len(line) > maxQuoted {
		cut := maxQuoted
		for cut > 0 && !utf8.RuneStart(line[cut]) {
			cut--
		}
		line = fmt.Sprintf("%s…(%d bytes)", line[:cut], len(line))
	}
	return line
}

// maxQuoted bounds how much of what a plugin printed a message quotes.
const maxQuoted = 300

// handshakeLike matches a line that looks like a handshake line.
var handshakeLike = regexp.MustCompile(`(?m)^\s*\d+\|\d+\|(unix|tcp)\|`)

// stderrFinding names a handshake line printed on stderr, where the host
// does not look for it.
func stderrFinding(stderr string) *finding {
	if !handshakeLike.MatchString(stderr) {
		return nil
	}
	return &finding{problem: ProblemHandshakeOnStderr, section: secHandshake,
		reason: "printed its handshake line on stderr; the host reads it from stdout only",
		fix:    "print the handshake line, and nothing else, on stdout; log to stderr"}
}

// reruns is how many more times Check starts a plugin to read its
// handshake line again. A plugin that pads its certificate's base64 passes
// a start when the DER length happens to be a multiple of 3, about one
// start in three; with two more starts, such a plugin passes Check about
// one time in 27 instead of one in 3.
const reruns = 2

// rerunFinding starts the plugin reruns more times, at once, and reads
// each handshake line it prints: a certificate made fresh at each start
// may be wrong in one and not in another.
func rerunFinding(ctx context.Context, entry config.PluginEntry, opts *Options, lang language) *finding {
	found := make([]*finding, reruns)
	var wg sync.WaitGroup
	for i := range found {
		wg.Go(func() {
			res, err := rerun(ctx, entry.Path, entry, rerunOptions{wait: min(opts.StartTimeout, maxProbeWait)})
			if err != nil || res.line == "" {
				return
			}
			if f := checkLine(res.line, lang); f != nil {
				f.reason = fmt.Sprintf("%s (another start of it printed %q, although the check's own start printed a line the host could read)", f.reason, shortLine(res.line))
				found[i] = f
			}
		})
	}
	wg.Wait()
	for _, f := range found {
		if f != nil {
			return f
		}
	}
	return nil
}
