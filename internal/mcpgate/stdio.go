package mcpgate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hashicorp/go-hclog"
	"github.com/hookhost/hookhost/internal/childproc"
)

// process is one run of a stdio server: its process, and the host's ends
// of its three pipes. The host owns the pipes rather than letting exec
// copy them, so that nothing waits on a pipe a server's child still holds,
// and so that what the server writes is bounded as it is read.
type process struct {
	cmd    *exec.Cmd
	pid    int
	stdin  *os.File
	stdout *lineLimitReader
	exited chan struct{} // closed when the process has exited and been reaped
	// exitErr is cmd.Wait's error, set before exited is closed.
	exitErr error
	// stderrDone is closed when the server's stderr has been read to its
	// end (every writer gone) or closed by the host.
	stderrDone chan struct{}
	stderr     *os.File
	closeOnce  sync.Once
}

// serverEnv returns the host variables named in names that are set, as
// NAME=value pairs; nothing else of the host's environment is passed on,
// as for plugins: servers are third-party code and the host's environment
// holds secrets. Never nil: a nil Env would give the server all of it.
func serverEnv(names []string) []string {
	env := make([]string, 0, len(names))
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			env = append(env, n+"="+v)
		}
	}
	return env
}

// startProcess starts a stdio server. maxLine bounds one message the
// server writes; log receives its stderr, line by line.
func startProcess(spec ServerSpec, maxLine int, log hclog.Logger) (*process, error) {
	cmd := exec.Command(spec.Command, spec.Args...)
	if cmd.Err != nil {
		return nil, fmt.Errorf("mcp server %q: command %q: %w", spec.Name, spec.Command, cmd.Err)
	}
	cmd.Dir = spec.Dir
	cmd.Env = serverEnv(spec.Env)
	cmd.SysProcAttr = childproc.Attr(syscall.SIGKILL)

	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: host: %w", spec.Name, err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("mcp server %q: host: %w", spec.Name, err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("mcp server %q: host: %w", spec.Name, err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := childproc.Start(cmd); err != nil {
		closeAll()
		return nil, fmt.Errorf("mcp server %q: cannot start %q: %w", spec.Name, spec.Command, err)
	}
	// The child has its copies; the host keeps only its own ends, so that
	// the server's exit is seen as the end of its output.
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()

	p := &process{
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		stdin:      inW,
		stdout:     &lineLimitReader{f: outR, limit: maxLine},
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
		stderr:     errR,
	}
	go func() {
		p.exitErr = cmd.Wait()
		// Whatever the server started goes with it.
		_ = childproc.KillGroup(p.pid)
		close(p.exited)
	}()
	go p.logStderr(log)
	return p, nil
}

// maxStderrLine bounds one logged line of a server's stderr; the rest of a
// longer line is logged as further lines.
const maxStderrLine = 4096

func (p *process) logStderr(log hclog.Logger) {
	defer close(p.stderrDone)
	br := bufio.NewReaderSize(p.stderr, maxStderrLine)
	for {
		line, err := br.ReadSlice('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			log.Info(string(bytes.TrimRight(line, "\r\n")))
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// kill ends the server and its process group and waits until it is reaped
// and its stderr is read out. The host's ends of the pipes are closed, so
// that nothing reading them waits on a child that left the group.
func (p *process) kill() {
	_ = childproc.KillGroup(p.pid)
	<-p.exited
	p.closeOnce.Do(func() {
		_ = p.stdin.Close()
		_ = p.stdout.Close()
		_ = p.stderr.Close()
	})
	<-p.stderrDone
}

// errMessageTooLarge is what the server's output reads as once one message
// grew past the limit: the connection is dropped, since a JSON stream cut
// mid-value cannot be resynchronised.
var errMessageTooLarge = errors.New("message over the size limit")

// lineLimitReader is a server's stdout, cut off at the first line (one
// JSON-RPC message) longer than limit bytes, so that no message, however
// long, is held whole in memory.
type lineLimitReader struct {
	f     *os.File
	limit int
	line  int // bytes of the current line so far
	over  atomic.Bool
}

func (r *lineLimitReader) Read(p []byte) (int, error) {
	if r.over.Load() {
		return 0, errMessageTooLarge
	}
	n, err := r.f.Read(p)
	rest := p[:n]
	for {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			r.line += len(rest)
			break
		}
		r.line += i
		if r.line > r.limit {
			break
		}
		r.line = 0
		rest = rest[i+1:]
	}
	if r.line > r.limit {
		r.over.Store(true)
		return 0, errMessageTooLarge
	}
	return n, err
}

func (r *lineLimitReader) Close() error { return r.f.Close() }

// tooLarge reports whether the server wrote a message over the limit.
func (r *lineLimitReader) tooLarge() bool { return r.over.Load() }

var _ io.ReadCloser = (*lineLimitReader)(nil)
