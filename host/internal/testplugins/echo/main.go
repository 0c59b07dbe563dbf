// Command echo is a test plugin whose behaviour is chosen by the tool name
// of each pre_tool_call_can_provide_result call, so that one binary can
// crash, hang, panic, leak a child or report its environment on demand. Its
// name is the base name it was started as, so that links to one binary can
// play several plugins.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

// toolsEnv lists tools to declare, comma separated; the host passes it only
// to plugins whose entry names it.
const toolsEnv = "TESTPLUGIN_TOOLS"

// hangDirEnv names a directory in which every "hang" call, once inside the
// plugin, appends the plugin's pid as a line to the file <name>.hang before
// it hangs, so that a test can tell when its calls have all arrived. The
// host passes it only to plugins whose entry names it.
const hangDirEnv = "TESTPLUGIN_HANG_DIR"

// startDirEnv names a directory in which the plugin, as its first act,
// appends its pid to <name>.pids, and then sleeps before serving while a
// file <name>.slow exists there: a plugin caught while starting. If
// <name>.spawn exists there, it starts a child before serving; see
// spawnIfAsked.
const startDirEnv = "TESTPLUGIN_START_DIR"

// The plugin's original stdout and stderr, the pipes the host reads; after
// Serve, os.Stdout and os.Stderr are go-plugin's own.
var rawStdout, rawStderr = os.Stdout, os.Stderr

type echo struct {
	sdk.Base
	name  string
	tools []hooks.ToolSpec
}

func (e *echo) Info() sdk.Info {
	return sdk.Info{Name: e.name, Version: "1.0.0", Tools: e.tools}
}

// Configure refuses a config that asks to be refused, and panics on one
// that asks for that, to exercise the host's handling of a rejected config
// and of a plugin whose Configure is at fault.
func (e *echo) Configure(_ context.Context, raw json.RawMessage) error {
	var c struct {
		Reject string `json:"reject"`
		Panic  string `json:"panic"`
		// Dumpable sets the dumpable flag again: a plugin that does not
		// keep its environment from other processes of its user.
		Dumpable bool `json:"dumpable"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	if c.Reject != "" {
		return errors.New(c.Reject)
	}
	if c.Panic != "" {
		panic(c.Panic)
	}
	if c.Dumpable {
		return setDumpable()
	}
	return nil
}

func (e *echo) PreToolCallCanProvideResult(ctx context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	var args struct {
		Name string `json:"name"`
		Who  string `json:"who"`
		Line string `json:"line"`
		Size int    `json:"size"`
	}
	_ = json.Unmarshal(req.Arguments, &args)
	switch req.Name {
	case "crash":
		os.Exit(2)
	case "hang":
		if dir := os.Getenv(hangDirEnv); dir != "" {
			if err := e.entered(dir); err != nil {
				return nil, err
			}
		}
		for {
			time.Sleep(time.Hour)
		}
	case "panic":
		panic("boom from " + e.name)
	case "mirror":
		// The arguments as they arrived: each concurrent call its own.
		return &hooks.ToolResult{Content: string(req.Arguments)}, nil
	case "waitcancel":
		// Records its entry, blocks until the call's context ends, then
		// records how it ended: what a test needs to see that the host's
		// cancellation reached the plugin.
		dir := os.Getenv(hangDirEnv)
		record := filepath.Join(dir, e.name+".waitcancel")
		if err := appendLine(record, fmt.Sprintf("entered %s", args.Line)); err != nil {
			return nil, err
		}
		<-ctx.Done()
		if err := appendLine(record, fmt.Sprintf("ended %s: %v", args.Line, ctx.Err())); err != nil {
			return nil, err
		}
		return nil, ctx.Err()
	case "pass":
		if args.Who == e.name {
			return nil, nil
		}
	case "env":
		v, ok := os.LookupEnv(args.Name)
		out, _ := json.Marshal(map[string]any{"set": ok, "value": v})
		return &hooks.ToolResult{Content: string(out)}, nil
	case "pid":
		return &hooks.ToolResult{Content: strconv.Itoa(os.Getpid())}, nil
	case "cwd":
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		return &hooks.ToolResult{Content: wd}, nil
	case "dumpable":
		d, err := getDumpable()
		if err != nil {
			return nil, err
		}
		return &hooks.ToolResult{Content: strconv.Itoa(d)}, nil
	case "log":
		// A raw line on the stderr the host parses as log lines.
		if _, err := fmt.Fprintln(rawStderr, args.Line); err != nil {
			return nil, err
		}
		return &hooks.ToolResult{Content: "logged"}, nil
	case "bigout":
		// One stdout line of args.Size bytes, on the pipe the host reads.
		line := append(bytes.Repeat([]byte("x"), args.Size), '\n')
		if _, err := rawStdout.Write(line); err != nil {
			return nil, err
		}
		return &hooks.ToolResult{Content: "wrote"}, nil
	case "escape", "childexit":
		// A child that holds the plugin's stdout and stderr, then the
		// plugin dies. An escaped child has left the process group.
		cmd := exec.Command(sleepBinary(), "300")
		cmd.Stdout, cmd.Stderr = rawStdout, rawStderr
		cmd.SysProcAttr = childAttr(req.Name == "escape")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		if dir := os.Getenv(hangDirEnv); dir != "" {
			if err := appendPID(filepath.Join(dir, e.name+"."+req.Name), cmd.Process.Pid); err != nil {
				return nil, err
			}
		}
		os.Exit(2)
	case "pipechild":
		// A child that holds the plugin's stdout and stderr, as the
		// children of shell or Python plugins do; the plugin lives on.
		cmd := exec.Command(sleepBinary(), "300")
		cmd.Stdout, cmd.Stderr = rawStdout, rawStderr
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		go cmd.Wait()
		return &hooks.ToolResult{Content: strconv.Itoa(cmd.Process.Pid)}, nil
	case "flood":
		// Stderr as fast as the host reads it, until the plugin is killed:
		// plain lines, lines far over any line buffer, and JSON log lines
		// of every shape.
		go func() {
			lines := [][]byte{
				[]byte(strings.Repeat("flood ", 200) + "\n"),
				append(bytes.Repeat([]byte("x"), 200000), '\n'),
				[]byte(`{"@level":"info","@message":"flood","@timestamp":1700000000}` + "\n"),
				[]byte(`{"@level":"error","@message":{"flood":true}}` + "\n"),
			}
			for i := 0; ; i++ {
				if _, err := rawStderr.Write(lines[i%len(lines)]); err != nil {
					return
				}
			}
		}()
		return &hooks.ToolResult{Content: "flooding"}, nil
	case "spin":
		for {
		}
	case "setsid":
		// A child that leaves the plugin's session and process group, and
		// the plugin lives on: only its cgroup still holds the child.
		cmd := exec.Command(sleepBinary(), "300")
		cmd.SysProcAttr = childAttr(true)
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		go cmd.Wait()
		return &hooks.ToolResult{Content: strconv.Itoa(cmd.Process.Pid)}, nil
	case "lanechild":
		// What a child of the plugin sees of the host's lane: the
		// descriptors it inherited, with what each one is, and the
		// variable that names the lane.
		cmd := exec.Command(shBinary(), "-c", `ls -l /proc/$$/fd; echo "HOOKHOST_LANE_FD=${HOOKHOST_LANE_FD-unset}"`)
		cmd.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("the child: %w", err)
		}
		return &hooks.ToolResult{Content: string(out)}, nil
	case "child":
		cmd := exec.Command(sleepBinary(), "300")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		go cmd.Wait()
		return &hooks.ToolResult{Content: strconv.Itoa(cmd.Process.Pid)}, nil
	}
	return &hooks.ToolResult{Content: "answered by " + e.name}, nil
}

// entered records that a "hang" call is inside this process; see hangDirEnv.
func (e *echo) entered(dir string) error {
	return appendPID(filepath.Join(dir, e.name+".hang"), os.Getpid())
}

func appendPID(path string, pid int) error {
	return appendLine(path, strconv.Itoa(pid))
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := fmt.Fprintln(f, line)
	if err := f.Close(); werr == nil {
		werr = err
	}
	return werr
}

// sleepBinary finds sleep without PATH, which the host does not pass on.
func sleepBinary() string {
	for _, p := range []string{"/bin/sleep", "/usr/bin/sleep"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "sleep"
}

// shBinary finds sh without PATH, which the host does not pass on.
func shBinary() string {
	for _, p := range []string{"/bin/sh", "/usr/bin/sh"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "sh"
}

func main() {
	e := &echo{name: filepath.Base(os.Args[0])}
	if dir := os.Getenv(startDirEnv); dir != "" {
		if err := appendPID(filepath.Join(dir, e.name+".pids"), os.Getpid()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, e.name+".slow")); err != nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for _, t := range strings.Split(os.Getenv(toolsEnv), ",") {
		if t = strings.TrimSpace(t); t != "" {
			e.tools = append(e.tools, hooks.ToolSpec{
				Name:        t,
				Description: fmt.Sprintf("test tool %s", t),
				InputSchema: json.RawMessage(`{"type":"object"}`),
			})
		}
	}
	if dir := os.Getenv(startDirEnv); dir != "" {
		if err := e.spawnIfAsked(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	sdk.Serve(e)
}

// spawnIfAsked starts a child that outlives nothing on its own, in the
// plugin's process group, when <name>.spawn exists in dir, and appends its
// pid to <name>.children: a plugin that is serving with a child of its own.
//
// With <name>.spawnsetsid there instead, the child leaves the plugin's
// session and process group.
func (e *echo) spawnIfAsked(dir string) error {
	_, err := os.Stat(filepath.Join(dir, e.name+".spawn"))
	_, serr := os.Stat(filepath.Join(dir, e.name+".spawnsetsid"))
	if err != nil && serr != nil {
		return nil
	}
	cmd := exec.Command(sleepBinary(), "300")
	cmd.SysProcAttr = childAttr(serr == nil)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return appendPID(filepath.Join(dir, e.name+".children"), cmd.Process.Pid)
}
