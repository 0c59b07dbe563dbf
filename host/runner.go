package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"

	"github.com/hookhost/hookhost/internal/childproc"
	"github.com/hookhost/hookhost/plugins/handshake"
)

// Limits on what the host reads from a plugin's stdout and stderr.
const (
	// maxOutputLine is the longest stdout or stderr line handed on as one
	// piece. It stays below go-plugin's own 64 KiB stderr line buffer, so a
	// line go-plugin receives is always whole. Longer lines are cut, with a
	// marker saying how much was dropped.
	maxOutputLine = 32 * 1024
	// maxSanitizedLine bounds a stderr line once sanitised (see
	// sanitizeLogLine): a cut line with its marker, still below go-plugin's
	// 64 KiB line buffer.
	maxSanitizedLine = maxOutputLine + 256
	// pipeDrain is how long the output pipes of a plugin whose process has
	// exited are still read. A process that escaped the plugin's process
	// group (setsid) may hold them open forever; nothing may wait on it.
	pipeDrain = 500 * time.Millisecond
)

// procRunner is the runner.Runner go-plugin starts plugins with. go-plugin's
// own runner hands it the raw pipes of the plugin process, and then: a
// stderr line whose @message, @level or @timestamp is not a string panics
// its log parser (and with it the host), a stdout line over 64 KiB stops its
// reader for good (the plugin then blocks writing to stdout), and Wait and
// Kill wait for every process holding the pipes, including ones that left
// the plugin's process group. So the host owns the pipes: go-plugin reads
// the handshake line and sanitised stderr lines from procRunner, the rest
// of stdout is read here without a line limit, and once the plugin process
// has exited its process group is killed and the pipes are closed after
// at most pipeDrain, whoever still holds them.
type procRunner struct {
	log       hclog.Logger // the plugin's logger
	name      string       // the plugin's name, for its cgroup's
	cmd       *exec.Cmd
	secure    *plugin.SecureConfig
	socketDir string // go-plugin's socket directory for this start

	gpOut, gpErr *io.PipeReader // what go-plugin reads
	outW, errW   *io.PipeWriter

	mu  sync.Mutex
	pid int
	// first is the first line the plugin printed, its handshake line,
	// kept so that a failed start can be explained from what it said.
	first string
	// plain is the first stderr line go-plugin logs at DEBUG because it
	// is neither JSON nor marked with a level; Check warns of it.
	plain string

	exited  chan struct{} // closed when the process has been reaped
	waitErr error
	// cg is the cgroup the process runs in, nil where plugins run in a
	// process group only (see cgroup_linux.go). Set before the process
	// is waited for.
	cg *pluginCgroup
}

var _ runner.Runner = (*procRunner)(nil)

func newProcRunner(log hclog.Logger, cmd *exec.Cmd, secure *plugin.SecureConfig, socketDir string) *procRunner {
	r := &procRunner{log: log, cmd: cmd, secure: secure, socketDir: socketDir, exited: make(chan struct{})}
	r.gpOut, r.outW = io.Pipe()
	r.gpErr, r.errW = io.Pipe()
	return r
}

// Start verifies the binary's checksum, when pinned, right before executing
// it, so the window for swapping the binary is as small as it can be.
func (r *procRunner) Start(ctx context.Context) error {
	err := r.start(ctx)
	if err != nil {
		// go-plugin's Kill, which would remove it, skips a runner with no
		// process.
		_ = os.RemoveAll(r.socketDir)
	}
	return err
}

func (r *procRunner) start(context.Context) error {
	if r.secure != nil {
		ok, err := r.secure.Check(r.cmd.Path)
		if err != nil {
			return &checksumError{err: err}
		}
		if !ok {
			return plugin.ErrChecksumsDoNotMatch
		}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return err
	}
	// *os.File outputs go to the child as they are: exec.Cmd starts no
	// copying goroutine, so its Wait returns when the process exits.
	r.cmd.Stdout, r.cmd.Stderr = outW, errW
	err = r.startInCgroup()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return err
	}
	r.mu.Lock()
	r.pid = r.cmd.Process.Pid
	r.mu.Unlock()

	var readers sync.WaitGroup
	readers.Go(func() { r.readStdout(outR) })
	readers.Go(func() { r.readStderr(errR) })
	go func() {
		r.waitErr = r.cmd.Wait()
		// Whatever the plugin started goes with it, even what left its
		// process group, before anyone waiting for the plugin hears it
		// is gone.
		if err := r.cg.kill(); err != nil {
			r.log.Debug("cannot kill the plugin's cgroup", "cgroup", r.cg.dir, "error", err)
		}
		close(r.exited)
		_ = childproc.KillGroup(r.cmd.Process.Pid)
		if r.cg != nil {
			go r.cg.remove()
		}
		drained := make(chan struct{})
		go func() { readers.Wait(); close(drained) }()
		t := time.NewTimer(pipeDrain)
		defer t.Stop()
		select {
		case <-drained:
		case <-t.C:
			r.log.Debug("plugin output pipes still held by another process after the plugin exited; closing them")
			outR.Close()
			errR.Close()
		}
	}()
	return nil
}

// startInCgroup starts the plugin in a cgroup of its own where the host
// can make one, and in its process group only where it cannot (see
// cgroup_linux.go). A kernel that will not start a process in a cgroup
// turns cgroups off for the rest of the host's life, once a start without
// one shows that the cgroup was the trouble.
func (r *procRunner) startInCgroup() error {
	cg := newPluginCgroup(r.name)
	if cg == nil || r.cmd.SysProcAttr == nil {
		cg.remove()
		if why := cgroupsUnavailable(); why != "" && cgroupsLogged.CompareAndSwap(false, true) {
			r.log.Debug("plugins run in a process group only: a child that calls setsid can outlive its plugin", "reason", why)
		}
		return childproc.Start(r.cmd)
	}
	env, attr := r.cmd.Env, *r.cmd.SysProcAttr
	release, err := cg.attach(r.cmd.SysProcAttr, &r.cmd.Env, handshake.CgroupEnv)
	if err == nil {
		err = childproc.Start(r.cmd)
		release()
		if err == nil {
			r.cg = cg
			return nil
		}
	}
	cg.remove()
	cgErr := err
	plain := exec.Command(r.cmd.Path)
	plain.Args, plain.Env, plain.Dir = r.cmd.Args, env, r.cmd.Dir
	plain.Stdin, plain.Stdout, plain.Stderr = r.cmd.Stdin, r.cmd.Stdout, r.cmd.Stderr
	plain.SysProcAttr = &attr
	r.cmd = plain
	if err := childproc.Start(plain); err != nil {
		return err
	}
	cgroupsOff(fmt.Sprintf("cannot start a process in a cgroup: %v", cgErr))
	if cgroupsLogged.CompareAndSwap(false, true) {
		r.log.Debug("plugins run in a process group only: a child that calls setsid can outlive its plugin", "reason", cgroupsUnavailable())
	}
	return nil
}

// cgroupsLogged says whether the host has logged why plugins run without
// cgroups: once is enough.
var cgroupsLogged atomic.Bool

// readStdout hands go-plugin the first line (the handshake) and logs the
// rest at DEBUG, in pieces of at most maxOutputLine bytes.
func (r *procRunner) readStdout(f *os.File) {
	defer f.Close()
	br := bufio.NewReaderSize(f, 4096)
	line, _, err := readLine(br, maxOutputLine)
	if len(line) > 0 || err == nil {
		r.mu.Lock()
		r.first = string(line)
		r.mu.Unlock()
		_, _ = r.outW.Write(append(socketFromDir(line, r.cmd.Dir), '\n'))
	}
	r.outW.Close()
	if err != nil {
		return
	}
	log := r.log.Named("stdout")
	for {
		line, dropped, err := readLine(br, maxOutputLine)
		if len(line) > 0 || dropped > 0 {
			log.Debug(string(withDropMarker(line, dropped)))
		}
		if err != nil {
			return
		}
	}
}

// socketFromDir makes a relative unix socket path in a handshake line
// absolute against dir, the plugin's working directory: go-plugin would
// look for it in the host's, which is another one. Any other line is
// returned as it is.
func socketFromDir(line []byte, dir string) []byte {
	parts := strings.Split(string(line), "|")
	if dir == "" || len(parts) < 4 || parts[2] != "unix" || parts[3] == "" || filepath.IsAbs(parts[3]) {
		return line
	}
	parts[3] = filepath.Join(dir, parts[3])
	return []byte(strings.Join(parts, "|"))
}

// readStderr passes every stderr line through sanitizeLogLine to go-plugin,
// which relays it into the host's log.
func (r *procRunner) readStderr(f *os.File) {
	defer f.Close()
	defer r.errW.Close()
	br := bufio.NewReaderSize(f, 4096)
	for {
		line, dropped, err := readLine(br, maxOutputLine)
		if len(line) > 0 || dropped > 0 || err == nil {
			r.notePlain(line)
			out := sanitizeLogLine(withDropMarker(line, dropped))
			if _, werr := r.errW.Write(append(out, '\n')); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// levelPrefixes are the plain stderr line prefixes go-plugin (v1.8,
// logStderr) takes a level from; "panic: " and "fatal error: " start a Go
// crash, which it logs as an error.
var levelPrefixes = []string{"[TRACE]", "[DEBUG]", "[INFO]", "[WARN]", "[ERROR]", "panic: ", "fatal error: "}

// notePlain keeps the first stderr line that go-plugin would log at DEBUG
// for want of a level: a plugin's warnings and errors written that way
// are hidden at the host's default log level.
func (r *procRunner) notePlain(line []byte) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return
	}
	if trimmed[0] == '{' && json.Valid(trimmed) {
		// go-plugin logs a JSON line whose @level is missing or not one
		// of hclog's names ("warning", pino's numeric "level") at DEBUG.
		var obj map[string]any
		if json.Unmarshal(trimmed, &obj) == nil {
			if lv, ok := obj["@level"].(string); ok {
				if l := hclog.LevelFromString(lv); l != hclog.NoLevel && l != hclog.Off {
					return
				}
			}
		}
	} else {
		for _, p := range levelPrefixes {
			if bytes.HasPrefix(line, []byte(p)) {
				return
			}
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.plain == "" {
		r.plain = string(trimmed[:min(len(trimmed), maxQuoted)])
	}
}

// plainLine is the first stderr line logged at DEBUG for want of a level,
// "" if there was none.
func (r *procRunner) plainLine() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.plain
}

// readLine reads one line without its newline, keeping at most max bytes of
// it and counting the bytes dropped beyond that. err is non-nil at the end
// of the input; line may then hold a last, unterminated line.
func readLine(br *bufio.Reader, max int) (line []byte, dropped int, err error) {
	for {
		chunk, isPrefix, rerr := br.ReadLine()
		if rerr != nil {
			return line, dropped, rerr
		}
		if room := max - len(line); room > 0 {
			take := min(room, len(chunk))
			line = append(line, chunk[:take]...)
			dropped += len(chunk) - take
		} else {
			dropped += len(chunk)
		}
		if !isPrefix {
			return line, dropped, nil
		}
	}
}

func withDropMarker(line []byte, dropped int) []byte {
	if dropped == 0 {
		return line
	}
	return fmt.Appendf(line, " … [hookhost: line cut at %d bytes, %d more dropped]", maxOutputLine, dropped)
}

// hclogTimeFormat is the layout go-plugin parses @timestamp with.
const hclogTimeFormat = "2006-01-02T15:04:05.000000Z07:00"

// sanitizeLogLine makes a plugin's stderr line safe for go-plugin's log
// parser (v1.8), which asserts that @message, @level and @timestamp of a
// JSON line are strings and panics otherwise. A JSON object is re-encoded
// with @message and @level as strings (a non-string value becomes its JSON
// text) and an @timestamp go-plugin cannot parse moved to plugin_timestamp;
// anything else is passed on as it is, which go-plugin logs as plain text.
//
// Re-encoding may lengthen a line (escaped quotes in a non-string message,
// invalid UTF-8 replaced). go-plugin splits a line over its buffer into
// fragments it logs at DEBUG, so a line over maxSanitizedLine is passed as
// plain text instead, cut, behind the "[LEVEL]" prefix go-plugin reads the
// level of plain lines from.
func sanitizeLogLine(line []byte) []byte {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return line
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber() // keeps large integers exact when re-encoded
	if err := dec.Decode(&obj); err != nil {
		return line
	}
	for _, key := range []string{"@message", "@level"} {
		if v, ok := obj[key]; ok {
			if _, isString := v.(string); !isString {
				obj[key] = jsonText(v)
			}
		}
	}
	if v, ok := obj["@timestamp"]; ok {
		s, isString := v.(string)
		if _, err := time.Parse(hclogTimeFormat, s); !isString || err != nil {
			delete(obj, "@timestamp")
			obj["plugin_timestamp"] = v
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// json.Marshal's \u0026 for every '&', '<' and '>' would make a line
	// six times longer, for a log no browser reads.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return []byte(fmt.Sprintf("[hookhost: unprintable plugin log line of %d bytes]", len(line)))
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(out) <= maxSanitizedLine {
		return out
	}
	level, _ := obj["@level"].(string)
	prefix := "[" + strings.ToUpper(hclog.LevelFromString(level).String()) + "] "
	if hclog.LevelFromString(level) == hclog.NoLevel {
		prefix = ""
	}
	cut := min(maxOutputLine, len(out))
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut-- // a whole last character
	}
	return withDropMarker(append([]byte(prefix), out[:cut]...), len(out)-cut)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Wait returns once the plugin process has exited and its output pipes are
// closed (go-plugin calls it only after it read them to the end).
func (r *procRunner) Wait(context.Context) error {
	<-r.exited
	return r.waitErr
}

// Kill kills the plugin's cgroup, where it has one, and its whole process
// group. Once the process has been reaped its pid may be another
// process's, so there is nothing left to kill: both were killed when the
// process was reaped.
func (r *procRunner) Kill(context.Context) error {
	select {
	case <-r.exited:
		return nil
	default:
	}
	r.mu.Lock()
	pid := r.pid
	r.mu.Unlock()
	if pid == 0 {
		return nil
	}
	if err := r.cg.kill(); err != nil {
		r.log.Debug("cannot kill the plugin's cgroup", "cgroup", r.cg.dir, "error", err)
	}
	if err := childproc.KillGroup(pid); err != nil {
		return err
	}
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// handshakeLine is the first line the plugin printed, "" before it did.
func (r *procRunner) handshakeLine() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

// Stdout is the plugin's first stdout line: the go-plugin handshake.
func (r *procRunner) Stdout() io.ReadCloser { return r.gpOut }

// Stderr is the plugin's stderr, one sanitised line at a time.
func (r *procRunner) Stderr() io.ReadCloser { return r.gpErr }

// Name is the plugin binary's path.
func (r *procRunner) Name() string { return r.cmd.Path }

// ID is the plugin's pid, empty before the process exists, which tells
// go-plugin's Kill that there is nothing to stop.
func (r *procRunner) ID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pid == 0 {
		return ""
	}
	return strconv.Itoa(r.pid)
}

// Diagnose adds nothing to go-plugin's own explanation of a failed
// handshake; launch explains start failures itself.
func (r *procRunner) Diagnose(context.Context) string { return "" }

// PluginToHost leaves addresses alone: host and plugin share a filesystem
// and a network.
func (r *procRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

// HostToPlugin leaves addresses alone, as PluginToHost does.
func (r *procRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// checksumError is a pinned binary that could not be hashed; go-plugin
// returns the runner's error as it is, so launch can tell it by its type.
type checksumError struct{ err error }

func (e *checksumError) Error() string { return "error verifying checksum: " + e.err.Error() }
func (e *checksumError) Unwrap() error { return e.err }
