package host

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc/codes"

	"github.com/hookhost/hookhost/config"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/internal/childproc"
	"github.com/hookhost/hookhost/internal/termtext"
	"github.com/hookhost/hookhost/internal/wire"
	"github.com/hookhost/hookhost/plugins/handshake"
)

// killGrace is how long a plugin gets to exit after go-plugin asked it to
// before its whole process group is killed. go-plugin itself waits 2s for a
// graceful exit, so this leaves it room to finish on its own.
const killGrace = 3 * time.Second

// instance is one plugin process the host talks to: its go-plugin client,
// the connection dispensed from it, and what it said about itself.
type instance struct {
	client *plugin.Client
	proto  plugin.ClientProtocol
	rpc    wire.Conn
	pid    int // also the process group id, unless attached
	// exited is closed once the process has been reaped, after which its
	// pid, and so its group id, may belong to another process.
	exited <-chan struct{}
	// manifest is what this process's Describe answered. The manifest the
	// Bus uses is the first start's, held by the supervised plugin; a restarted
	// process's is only compared with it.
	manifest hooks.Manifest
	// version is the plugin protocol version go-plugin negotiated.
	version int
	// lane is the host's end of the plugin's lane (wire.LaneFDEnv) until
	// ready hands it to the connection, nil when there is none.
	lane net.Conn
	// attached is set when the host attached to a plugin started by hand
	// instead of starting it: its process is not the host's to stop.
	attached *attachment
	// line is the handshake line the plugin printed, and tls the host's
	// TLS config for it (its client certificate, and the plugin's
	// certificate as the root); the probes of a failed start and of Check
	// use them.
	line string
	tls  *tls.Config
	// addr is the address line names, a relative unix socket path taken
	// from the plugin's working directory as go-plugin's dial is; nil
	// when it names none.
	addr net.Addr
	// run is the runner of a process the host started, nil when attached.
	run *procRunner
	// killing is set when the host ends the process on purpose, nil when
	// attached; see killLogger.
	killing *atomic.Bool
	// checking is set while a health check decides whether a broken hook
	// stream means the process is down (see supervised.failed).
	checking atomic.Bool
}

// launch brings one plugin from its config entry to the point where it can
// serve hooks: it starts the plugin's process (binary checks, checksum, a
// scrubbed environment in a process group of its own, the go-plugin
// handshake) or, for an entry with a reattach config, attaches to the
// process already running; then Describe, manifest validation and
// Configure. Start, restarts and Check all go through here so that a
// plugin is held to the same rules every time. On failure nothing the host
// started is left running.
func launch(ctx context.Context, name string, entry config.PluginEntry, opts *Options) (*instance, *StartError) {
	if err := ctx.Err(); err != nil {
		return nil, startErr(name, err, "", "host: start abandoned: %v", err)
	}
	var in *instance
	var serr *StartError
	if entry.Reattach != nil {
		in, serr = attach(name, entry, opts)
	} else {
		in, serr = spawn(ctx, name, entry, opts)
	}
	if serr != nil {
		return nil, serr
	}
	if serr := in.ready(ctx, name, entry, opts); serr != nil {
		in.abort()
		return nil, serr
	}
	opts.Logger.Named("plugin."+name).Debug("plugin started", "pid", in.pid, "version", in.manifest.Version, "protocol", in.version)
	return in, nil
}

// spawn starts the plugin's process and completes go-plugin's handshake.
func spawn(ctx context.Context, name string, entry config.PluginEntry, opts *Options) (*instance, *StartError) {
	path := entry.Path
	if serr := checkBinary(name, path); serr != nil {
		return nil, serr
	}
	versions, serr := offered(name, entry.Protocol)
	if serr != nil {
		return nil, serr
	}
	var secure *plugin.SecureConfig
	if entry.SHA256 != "" {
		sum, err := hex.DecodeString(entry.SHA256)
		if err != nil || len(sum) != sha256.Size {
			return nil, startErr(name, err,
				fmt.Sprintf("set plugins.entries.%s.sha256 to the output of: sha256sum %s", name, path),
				"config: plugins.entries.%s.sha256 = %q is not a sha256 hex digest", name, entry.SHA256)
		}
		// procRunner hashes the file right before exec.
		secure = &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()}
	}

	log := opts.Logger.Named("plugin." + name)
	killing := new(atomic.Bool)
	var run *procRunner
	var started atomic.Pointer[procRunner] // run, for the unflushed probe
	tail := &tailWriter{max: 2048}
	var lane net.Conn
	var laneEnd *os.File // the plugin's end, the host's copy
	ccfg := &plugin.ClientConfig{
		HandshakeConfig:  handshake.Config,
		VersionedPlugins: versions,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		GRPCDialOptions:  wire.DialOptions(),
		// The host runs the process and owns its output pipes; see
		// procRunner. go-plugin passes the variables it adds (magic cookie,
		// protocol versions, socket directory, client certificate) in
		// spec.Env.
		RunnerFunc: func(_ hclog.Logger, spec *exec.Cmd, socketDir string) (runner.Runner, error) {
			cmd := exec.Command(path)
			cmd.Dir = entry.Dir
			cmd.SysProcAttr = childproc.Attr(syscall.SIGTERM)
			// Only the variables the entry lists reach the plugin, and
			// not the host's stdin, which is the user's terminal.
			cmd.Env = append(pluginEnv(entry.Env), spec.Env...)
			cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", handshake.HostPIDEnv, os.Getpid()))
			if h, p, err := newLane(); err == nil {
				lane, laneEnd = h, p
				// The first of ExtraFiles is the process's descriptor 3.
				cmd.ExtraFiles = []*os.File{p}
				cmd.Env = append(cmd.Env, wire.LaneFDEnv+"=3")
			} else {
				log.Debug("the plugin gets no lane; its hook calls go on the Hooks stream", "error", err.Error())
			}
			run = newProcRunner(log, cmd, secure, socketDir)
			run.name = name
			started.Store(run)
			return run, nil
		},
		SkipHostEnv:  true,
		Logger:       killLogger{Logger: log, deliberate: killing},
		Stderr:       tail,
		SyncStdout:   log.Named("stdout").StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}),
		SyncStderr:   log.Named("stderr").StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}),
		StartTimeout: opts.StartTimeout,
		// The supervisor owns the plugin's lifetime; go-plugin's global
		// cleanup list would only race with it.
		Managed: false,
	}
	client := plugin.NewClient(ccfg)
	in := &instance{client: client, killing: killing}

	probe := startUnflushedProbe(ctx, entry, opts.StartTimeout, func() bool {
		r := started.Load()
		return r != nil && r.handshakeLine() != ""
	})
	proto, err := client.Client()
	if laneEnd != nil {
		// The process has its own copy, or never started.
		_ = laneEnd.Close()
	}
	timedOut := err != nil && strings.Contains(err.Error(), "timeout while waiting for plugin to start")
	ttyLine := probe.result(timedOut)
	if run != nil && run.cmd.Process != nil {
		in.pid = run.cmd.Process.Pid
		in.exited = run.exited
	}
	if run != nil {
		in.line = run.handshakeLine()
		in.addr = lineAddr(string(socketFromDir([]byte(in.line), run.cmd.Dir)))
		in.run = run
	}
	in.lane = lane
	if err != nil {
		in.abort()
		return nil, classifyStart(ctx, &startFailure{
			name: name, path: path, entry: entry, opts: opts, err: err,
			stderr: tail.String(), line: in.line, lang: detectLanguage(path),
			ttyLine: ttyLine,
		})
	}
	in.proto, in.version = proto, client.NegotiatedVersion()
	// go-plugin keeps the config it was given and puts the TLS config it
	// made from the plugin's certificate there.
	in.tls = ccfg.TLSConfig
	return in, nil
}

// offered returns the plugin sets of the protocol versions offered to a
// plugin: every version the host speaks, or the one its entry pins.
func offered(name string, pin int) (map[int]plugin.PluginSet, *StartError) {
	all := handshake.VersionedPlugins(nil, nil)
	if pin == 0 {
		return all, nil
	}
	set, ok := all[pin]
	if !ok {
		return nil, startErr(name, nil,
			fmt.Sprintf("set plugins.entries.%s.protocol to 0 (the highest version both speak) or to a version this host speaks", name),
			"plugins.entries.%s.protocol = %d, but this host speaks %s", name, pin, versionsText(spoken()))
	}
	return map[int]plugin.PluginSet{pin: set}, nil
}

// spoken lists the plugin protocol versions this host speaks, in order.
func spoken() []int {
	return slices.Sorted(maps.Keys(handshake.VersionedPlugins(nil, nil)))
}

// versionsText says "version 1" or "versions 1 and 2".
func versionsText(vs []int) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.Itoa(v)
	}
	switch len(parts) {
	case 0:
		return "no version"
	case 1:
		return "version " + parts[0]
	}
	return "versions " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// ready takes a process that completed go-plugin's handshake through
// Describe, manifest validation and Configure.
func (in *instance) ready(ctx context.Context, name string, entry config.PluginEntry, opts *Options) *StartError {
	path := entry.Path
	if in.attached != nil {
		path = in.attached.where()
	}
	// The language is read only when there is an error to explain.
	lang := func() language {
		if in.attached != nil {
			return language{}
		}
		return detectLanguage(path)
	}
	raw, err := in.proto.Dispense(handshake.PluginKey)
	if err != nil {
		return problemErr(startErr(name, err, lang().rebuild(secVersions),
			"the plugin at %s does not serve the hookhost plugin service: %v", path, err), ProblemService)
	}
	rpc, ok := raw.(wire.Conn)
	if !ok {
		return problemErr(startErr(name, nil, lang().rebuild(secVersions),
			"the plugin at %s does not serve the hookhost plugin service (got %T)", path, raw), ProblemService)
	}
	in.rpc = rpc
	if in.lane != nil {
		if v2, ok := rpc.(*wire.V2Client); ok {
			v2.OfferLane(in.lane)
		} else {
			_ = in.lane.Close()
		}
		in.lane = nil
	}
	// Describe's answer and Configure's are held to the plugin's limits
	// too; the supervised plugin that adopts the process adds its own hooks.
	rpc.Apply(settings(name, entry, nil))
	if v := rpc.Version(); v != in.version {
		return startErr(name, nil, lang().rebuild(secVersions),
			"negotiated plugin protocol %d, but the connection speaks %d", in.version, v)
	}

	dctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	m, err := rpc.Describe(dctx)
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return startErr(name, err, "look at the plugin's log; Describe must answer at once",
				"did not answer Describe within %s", opts.StartTimeout)
		}
		if in.attached == nil {
			l := lang()
			plain := func() bool {
				return in.addr != nil && answersPlaintext(ctx, in.addr, probeTimeout(opts))
			}
			// A server that refuses the host's certificate may close the
			// connection before gRPC reads the TLS alert that says why.
			seen := err
			if addr := in.addr; addr != nil && in.tls != nil {
				if terr := tlsProbe(ctx, addr, in.tls, probeTimeout(opts)); terr != nil &&
					(strings.Contains(terr.Error(), "tls:") || strings.Contains(terr.Error(), "x509:")) {
					// The probe's own error says what TLS found, unescaped.
					seen = terr
				}
				if checkLine(in.line, l) == nil {
					if fd := servedCertFinding(ctx, addr, in.line, in.tls, probeTimeout(opts)); fd != nil {
						return fd.startErr(name, err, l)
					}
				}
			}
			if fd := tlsFinding(in.line, seen, l, plain); fd != nil {
				return fd.startErr(name, err, l)
			}
		}
		return startErr(name, err, "look at the plugin's log", "Describe failed: %s", termtext.Printable(err.Error()))
	}
	if m.Name != name {
		return startErr(name, nil,
			fmt.Sprintf("point plugins.entries.%s.path at the %s plugin, or enable this binary as %q", name, name, m.Name),
			"the plugin binary at %s calls itself %q", path, m.Name)
	}
	if err := hooks.ValidateManifest(m, entry.AllowToolOverride); err != nil {
		return manifestErr(name, err, lang())
	}

	conf := []byte(entry.Config)
	if len(conf) == 0 {
		conf = []byte("{}")
	}
	if serr := checkConfigKeys(name, entry, m.Config, conf); serr != nil {
		return serr
	}
	cctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	unserved, err := rpc.Configure(cctx, conf)
	cancel()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return startErr(name, err, "make the plugin's Configure return sooner",
				"did not finish Configure within %s", opts.StartTimeout)
		}
		// A CallError without a Kind is the plugin's own refusal, in its
		// own words; anything else is a failure to ask.
		if ce := (*wire.CallError)(nil); errors.As(err, &ce) && ce.Kind == nil {
			where := fmt.Sprintf("[plugins.entries.%s.config]", name)
			if at := entry.Source.At(entry.Source.ConfigLine); entry.Source.ConfigLine > 0 {
				where += " at " + at
			}
			if ce.Status.Code() == codes.Internal {
				// A panic in the plugin's Configure, or a mistake its SDK
				// found in the plugin's code (an unserved list that is not
				// one): no change to the config is sure to cure it.
				return startErr(name, err, "this is a fault in the plugin, not a refusal of its config: look at the plugin's log, and report it to the plugin's author; "+where+" may be what it trips on",
					"failed in Configure: %s", termtext.Printable(ce.Msg))
			}
			return startErr(name, err, "correct "+where, "rejected its config: %s", termtext.Printable(ce.Msg))
		}
		return startErr(name, err, "look at the plugin's log", "Configure failed: %s", termtext.Printable(err.Error()))
	}
	// The hooks the plugin does not serve as configured are not asked.
	in.manifest = m.Without(unserved)
	return nil
}

// checkConfigKeys refuses, before Configure, a config table with a key the
// plugin's manifest does not declare, pointing at the line that sets it:
// a misspelt key a plugin never reads would otherwise be a setting that
// looks active and is not. A plugin that declares nothing checks its
// config itself.
func checkConfigKeys(name string, entry config.PluginEntry, decl *hooks.ConfigKeys, conf []byte) *StartError {
	if decl == nil {
		return nil
	}
	var table map[string]json.RawMessage
	if err := json.Unmarshal(conf, &table); err != nil {
		return startErr(name, err, "look at the plugin's entry", "host: config of plugins.entries.%s is not a JSON object: %v", name, err)
	}
	if len(table) == 0 {
		return nil
	}
	src := entry.Source
	tableKey := fmt.Sprintf("plugins.entries.%s.config", name)
	given := slices.Sorted(maps.Keys(table))
	if len(decl.Keys) == 0 {
		return startErr(name, nil, fmt.Sprintf("remove [%s]; this plugin has no settings", tableKey),
			"config: %s%s: the plugin takes no config, but the table sets %s", prefix(src.At(src.ConfigLine)), tableKey, strings.Join(given, ", "))
	}
	takes := slices.Sorted(slices.Values(decl.Keys))
	// The first unknown key in the file is the one reported.
	slices.SortStableFunc(given, func(a, b string) int { return src.ConfigKeys[a] - src.ConfigKeys[b] })
	for _, k := range given {
		if slices.Contains(decl.Keys, k) {
			continue
		}
		hint := "remove the key, or use one the plugin takes"
		if near := config.Suggest(k, takes); near != "" {
			hint = fmt.Sprintf("did you mean %s?", near)
		}
		return startErr(name, nil, hint,
			"config: %s%s.%s: unknown key (the plugin takes %s)", prefix(src.At(src.ConfigKeys[k])), tableKey, k, strings.Join(takes, ", "))
	}
	return nil
}

// prefix makes a position the start of a message, "" when there is none.
func prefix(at string) string {
	if at == "" {
		return ""
	}
	return at + ": "
}

// settings are the message rules of one plugin's config entry.
func settings(name string, entry config.PluginEntry, repaired func(hook string, fields int)) wire.Settings {
	return wire.Settings{
		Plugin:         name,
		MaxResultSize:  entry.MaxResultSize,
		MaxRequestSize: entry.MaxRequestSize,
		Repaired:       repaired,
	}
}

// abort tears down a plugin that failed to start. There is nothing worth a
// graceful shutdown, and killing the group first means go-plugin's Kill is
// not left waiting on pipes a child still holds.
func (in *instance) abort() {
	in.deliberateKill()
	ctx, cancel := context.WithTimeout(context.Background(), killGrace)
	defer cancel()
	_ = in.stop(ctx, false)
}

// deliberateKill marks the process as ended on purpose by the host.
func (in *instance) deliberateKill() {
	if in.killing != nil {
		in.killing.Store(true)
	}
}

// stop ends the plugin and everything in its process group, bounded by ctx.
// Graceful first lets go-plugin ask the plugin to shut down and wait for it;
// the group kill afterwards takes the children the plugin did not reap, and
// also unblocks go-plugin if one of them holds the plugin's output pipes.
func (in *instance) stop(ctx context.Context, graceful bool) error {
	if in.rpc != nil {
		in.rpc.Close()
	}
	if in.lane != nil {
		_ = in.lane.Close()
	}
	if in.attached != nil {
		return in.attached.detach(in)
	}
	if !graceful {
		in.killGroup()
	}
	done := make(chan struct{})
	go func() {
		in.client.Kill()
		close(done)
	}()
	if graceful {
		t := time.NewTimer(killGrace)
		select {
		case <-done:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		in.killGroup()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// killGroup kills the plugin's process group unless the process has been
// reaped: its pid may then lead another process's group, and the runner
// killed the plugin's own group when it reaped it.
func (in *instance) killGroup() {
	if in.attached != nil {
		return
	}
	select {
	case <-in.exited:
		return
	default:
	}
	if in.run != nil {
		_ = in.run.cg.kill()
	}
	_ = childproc.KillGroup(in.pid)
}

func checkBinary(name, path string) *StartError {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A script is not built: its name says what it is.
		switch byExtension(path) {
		case langPython:
			return startErr(name, err, fmt.Sprintf("set plugins.entries.%s.path to the plugin script's absolute path", name),
				"script %s does not exist", path)
		case langJS:
			return startErr(name, err, fmt.Sprintf("compile the plugin (e.g. npm run build, for a TypeScript plugin) or set plugins.entries.%s.path to its script", name),
				"script %s does not exist", path)
		}
		return startErr(name, err,
			fmt.Sprintf("build it (make plugins) or set plugins.entries.%s.path", name),
			"binary %s does not exist", path)
	case err != nil:
		return startErr(name, err, "check the permissions of the binary and its directory",
			"cannot read binary %s: %v", path, err)
	case fi.IsDir():
		return startErr(name, nil,
			fmt.Sprintf("set plugins.entries.%s.path to the plugin binary itself", name),
			"%s is a directory, not a plugin binary", path)
	case fi.Mode().Perm()&0o111 == 0:
		return startErr(name, nil, "chmod +x "+path, "binary %s is not executable", path)
	}
	return nil
}

// pluginEnv returns the host variables named in names that are set, as
// NAME=value pairs. Nothing else of the host's environment is passed on:
// plugins are third-party code and the host's environment holds secrets.
func pluginEnv(names []string) []string {
	env := make([]string, 0, len(names))
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			env = append(env, n+"="+v)
		}
	}
	return env
}

var pluginVersionRE = regexp.MustCompile(`Plugin version: (\S+?),`)

// startFailure is a start that failed before or during go-plugin's
// handshake, with what the host saw of the plugin.
type startFailure struct {
	name, path string
	entry      config.PluginEntry
	opts       *Options
	err        error
	stderr     string // the end of the plugin's stderr
	line       string // the first line it printed, its handshake line
	lang       language
	// ttyLine is the handshake line the plugin printed when rerun with
	// stdout on a terminal (see startUnflushedProbe), "" if none.
	ttyLine string
}

// withStderr adds the end of the plugin's stderr to a reason.
func (f *startFailure) withStderr(s string) string {
	if f.stderr == "" {
		return s
	}
	return fmt.Sprintf("%s; its stderr ends with: %q", s, f.stderr)
}

// classifyStart turns a go-plugin start error into an operator's
// explanation. go-plugin reports these conditions only as text, with no
// error types to test for, so the matching is on its messages (v1.8); the
// project's own errors are never matched this way. Where go-plugin's
// message does not say what the plugin did wrong, the plugin's handshake
// line, stderr and #! line are read, and for a plugin that never printed
// its handshake line, probes rerun it (see rerun).
func classifyStart(ctx context.Context, f *startFailure) *StartError {
	name, path, entry, err := f.name, f.path, f.entry, f.err
	msg := err.Error()
	lower := strings.ToLower(msg)
	lang := f.lang
	switch {
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		actual, herr := fileSHA256(path)
		if herr != nil {
			actual = "unknown (" + herr.Error() + ")"
		}
		return startErr(name, err,
			fmt.Sprintf("if the binary was rebuilt on purpose, set plugins.entries.%s.sha256 = %q; otherwise rebuild or restore the binary that was pinned", name, actual),
			"checksum mismatch: refusing to run %s: expected sha256 %s (plugins.entries.%s.sha256), actual %s",
			path, entry.SHA256, name, actual)
	case errors.As(err, new(*checksumError)):
		return startErr(name, err, "check that the binary is readable", "cannot checksum %s: %v", path, err)
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		line := strings.TrimPrefix(msg, "Unrecognized remote plugin message:")
		line, _, _ = strings.Cut(line, "\n")
		line = strings.TrimSpace(line)
		if line == "" {
			if fd := stderrFinding(f.stderr); fd != nil {
				return fd.startErr(name, err, lang)
			}
			if fd := exitFinding(name, entry, f.stderr, lang); fd != nil {
				fd.reason = f.withStderr(fd.reason)
				return fd.startErr(name, err, lang)
			}
			return problemErr(startErr(name, err,
				fmt.Sprintf("run the plugin by hand to see why it stops, or check that %s is a hookhost plugin; %s", path, lang.howTo(secHandshake)),
				"%s", f.withStderr("exited before completing the go-plugin handshake (nothing on stdout)")), ProblemNoHandshake)
		}
		if strings.Contains(line, "|") {
			if fd := checkLine(line, lang); fd != nil {
				return fd.startErr(name, err, lang)
			}
		}
		return problemErr(startErr(name, err,
			fmt.Sprintf("a plugin must never write to stdout before its handshake line, nor after it: log to stderr instead (see %s); if %s is not a hookhost plugin, correct plugins.entries.%s.path", docLink(secStdio), path, name),
			"wrote %q to stdout instead of the go-plugin handshake", line), ProblemStdout)
	case strings.Contains(msg, "error parsing core protocol version"),
		strings.Contains(msg, "Error parsing protocol version"),
		strings.Contains(msg, "unknown address type"),
		strings.Contains(msg, "error parsing server cert"):
		if fd := checkLine(f.line, lang); fd != nil {
			return fd.startErr(name, err, lang)
		}
		return startErr(name, err, lang.howTo(secHandshake), "printed a handshake line the host cannot read (%q): %s", shortLine(f.line), firstLine(msg))
	case strings.Contains(lower, "incompatible core api version"):
		if fd := checkLine(f.line, lang); fd != nil {
			return fd.startErr(name, err, lang)
		}
		return problemErr(startErr(name, err, lang.rebuild(secHandshake),
			"speaks an incompatible go-plugin core protocol: %s", firstLine(msg)), ProblemCoreProtocol)
	case strings.Contains(lower, "incompatible api version"):
		theirs := "another version"
		if m := pluginVersionRE.FindStringSubmatch(msg); m != nil {
			theirs = "version " + m[1]
		}
		if entry.Protocol != 0 {
			return problemErr(startErr(name, err,
				fmt.Sprintf("set plugins.entries.%s.protocol = 0 to use the highest version both speak, or %s", name, lang.rebuild(secVersions)),
				"speaks plugin protocol %s, but plugins.entries.%s.protocol pins version %d", theirs, name, entry.Protocol), ProblemAppProtocol)
		}
		return problemErr(startErr(name, err,
			fmt.Sprintf("make the plugin speak protocol %s (%s), or use a hookhost release that speaks its version", versionsText(spoken()), lang.rebuild(secVersions)),
			"speaks plugin protocol %s, but this host speaks %s", theirs, versionsText(spoken())), ProblemAppProtocol)
	case strings.Contains(msg, "unsupported plugin protocol"):
		if fd := checkLine(f.line, lang); fd != nil {
			return fd.startErr(name, err, lang)
		}
		return problemErr(startErr(name, err, lang.howTo(secHandshake),
			"speaks a protocol other than gRPC: %s", firstLine(msg)), ProblemNotGRPC)
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		// A line on stdout that was not flushed is the mistake, even if it
		// was echoed on stderr as well.
		if fd := unflushedFinding(f); fd != nil {
			return fd.startErr(name, err, lang)
		}
		if fd := stderrFinding(f.stderr); fd != nil {
			return fd.startErr(name, err, lang)
		}
		fix := "check that the plugin calls sdk.Serve promptly and look at its log; a slow machine may need a longer start timeout"
		if lang.kind != langGo {
			fix = fmt.Sprintf("check that the plugin prints its handshake line promptly, and flushes it, and look at its log (%s); a slow machine may need a longer start timeout", docLink(secHandshake))
		}
		return problemErr(startErr(name, err, fix,
			"%s", f.withStderr(fmt.Sprintf("did not complete the go-plugin handshake within %s", f.opts.StartTimeout))), ProblemHandshakeTimeout)
	case strings.Contains(msg, "plugin exited before we could connect"):
		if fd := stderrFinding(f.stderr); fd != nil {
			return fd.startErr(name, err, lang)
		}
		if fd := exitFinding(name, entry, f.stderr, lang); fd != nil {
			fd.reason = f.withStderr(fd.reason)
			return fd.startErr(name, err, lang)
		}
		return problemErr(startErr(name, err,
			fmt.Sprintf("run the plugin by hand to see why it stops, or check that %s is a hookhost plugin; %s", path, lang.howTo(secHandshake)),
			"%s", f.withStderr("exited before completing the go-plugin handshake")), ProblemNoHandshake)
	case errors.Is(err, syscall.ENOENT):
		if fd := missingInterpreter(path, lang); fd != nil {
			return fd.startErr(name, err, lang)
		}
	case errors.Is(err, syscall.EACCES):
		return startErr(name, err, "chmod +x "+path, "binary %s cannot be executed: permission denied", path)
	case errors.Is(err, syscall.ENOEXEC):
		if hasBOMShebang(path) {
			return problemErr(startErr(name, err,
				fmt.Sprintf("save the script as UTF-8 without a byte order mark (e.g. sed -i '1s/^\\xEF\\xBB\\xBF//' %s); see %s", path, docLink(secEnvironment)),
				"%s begins with a byte order mark (EF BB BF) before its #! line, so the system does not see the #! line and cannot tell what runs it", path), ProblemInterpreterMissing)
		}
		if !lang.isScript() && (lang.kind == langPython || lang.kind == langJS || looksLikeText(path)) {
			interp := "/usr/bin/python3"
			if lang.kind == langJS {
				interp = "/usr/bin/node"
			}
			return problemErr(startErr(name, err,
				fmt.Sprintf("make its first line #! and the absolute path of its interpreter (e.g. #!%s), or point plugins.entries.%s.path at an executable that runs it; see %s", interp, name, docLink(secEnvironment)),
				"%s has no #! line naming its interpreter, so the system cannot tell what runs it", path), ProblemInterpreterMissing)
		}
		return startErr(name, err, "build the plugin for this operating system and architecture",
			"%s is not an executable for this system: %v", path, err)
	}
	return startErr(name, err, "look at the plugin's log", "failed to start: %v", err)
}

// hasBOMShebang reports whether the file at path begins with a UTF-8
// byte order mark and then #!, as some editors save a script.
func hasBOMShebang(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 5)
	n, _ := io.ReadFull(f, head)
	return string(head[:n]) == "\xef\xbb\xbf#!"
}

// unflushedWait is how long the unflushed probe waits for a handshake
// line on a terminal: a plugin that only forgot to flush prints it at once.
const unflushedWait = time.Second

// unflushedProbe is a rerun of a plugin with its stdout on a
// pseudo-terminal, where Python, C's stdio and most runtimes flush every
// line: if a plugin that timed out without a handshake line prints one
// there, the first one sat in a pipe buffer. It runs during the last part
// of the start timeout, and only if the plugin has printed nothing by
// then, so that a start that times out is explained within its own limit.
type unflushedProbe struct {
	cancel context.CancelFunc
	done   chan struct{}
	line   string // set before done is closed
}

// startUnflushedProbe arms the probe for a start bounded by timeout;
// printed reports whether the plugin has printed its handshake line.
func startUnflushedProbe(ctx context.Context, entry config.PluginEntry, timeout time.Duration, printed func() bool) *unflushedProbe {
	ctx, cancel := context.WithCancel(ctx)
	p := &unflushedProbe{cancel: cancel, done: make(chan struct{})}
	wait := min(timeout/2, unflushedWait)
	go func() {
		defer close(p.done)
		t := time.NewTimer(timeout - wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		if printed() {
			return
		}
		if res, err := rerun(ctx, entry.Path, entry, rerunOptions{tty: true, wait: wait}); err == nil {
			p.line = res.line
		}
	}()
	return p
}

// result is the line the probe saw once it is done, waiting for it when
// the start timed out; otherwise the probe is stopped (its process group
// killed) and nothing is returned.
func (p *unflushedProbe) result(timedOut bool) string {
	if !timedOut {
		p.cancel()
	}
	<-p.done
	p.cancel()
	return p.line
}

// unflushedFinding names a handshake line left in a pipe buffer, from
// what the unflushed probe saw; nil when it saw nothing.
func unflushedFinding(f *startFailure) *finding {
	if f.line != "" || f.ttyLine == "" {
		return nil
	}
	res := rerunResult{line: f.ttyLine}
	fix := "flush stdout right after printing the handshake line"
	switch f.lang.kind {
	case langPython:
		fix = "print the handshake line with print(line, flush=True), or call sys.stdout.flush() after it"
	case langJS:
		fix = "write the handshake line with process.stdout.write(line + \"\\n\"), not through a buffered stream"
	}
	return &finding{problem: ProblemUnflushed, section: secHandshake, fix: fix,
		reason: fmt.Sprintf("printed its handshake line into its stdout buffer and never flushed it, so the host waited %s for it in vain: rerun with stdout on a terminal, which flushes every line, it printed %q at once", f.opts.StartTimeout, shortLine(res.line))}
}

func manifestErr(name string, err error, lang language) *StartError {
	fix := "correct the manifest the plugin answers Describe with"
	if lang.kind == langGo {
		fix = "correct the plugin's manifest (its Info) and rebuild it"
	}
	me := (*hooks.ManifestError)(nil)
	if !errors.As(err, &me) {
		return startErr(name, err, fix, "invalid manifest: %v", err)
	}
	if me.OutsideNamespace {
		fix = fmt.Sprintf("rename the tool %q to start with %q, or set plugins.entries.%s.allow_tool_override = true", me.Tool, name+"__", name)
	}
	return startErr(name, err, fix, "invalid manifest: %s", me.Problem)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// tailWriter keeps the last max bytes of a plugin's raw stderr, so that a
// plugin that dies before the handshake can be explained by its own words.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
