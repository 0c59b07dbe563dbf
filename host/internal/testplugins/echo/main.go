// Command echo is a test plugin whose behaviour is chosen by the tool name
// of each pre_tool_call_can_provide_result call, so that one binary can
// crash, hang, panic, leak a child or report its environment on demand. Its
// name is the base name it was started as, so that links to one binary can
// play several plugins.
package main

import (
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

type echo struct {
	sdk.Base
	name  string
	tools []hooks.ToolSpec
}

func (e *echo) Info() sdk.Info {
	return sdk.Info{Name: e.name, Version: "1.0.0", Tools: e.tools}
}

// Configure refuses a config that asks to be refused, to exercise the
// host's handling of a rejected config.
func (e *echo) Configure(_ context.Context, raw json.RawMessage) error {
	var c struct {
		Reject string `json:"reject"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	if c.Reject != "" {
		return errors.New(c.Reject)
	}
	return nil
}

func (e *echo) PreToolCallCanProvideResult(_ context.Context, req hooks.ToolCallRequest) (*hooks.ToolResult, error) {
	var args struct {
		Name string `json:"name"`
		Who  string `json:"who"`
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
	f, err := os.OpenFile(filepath.Join(dir, e.name+".hang"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := fmt.Fprintf(f, "%d\n", os.Getpid())
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

func main() {
	e := &echo{name: filepath.Base(os.Args[0])}
	for _, t := range strings.Split(os.Getenv(toolsEnv), ",") {
		if t = strings.TrimSpace(t); t != "" {
			e.tools = append(e.tools, hooks.ToolSpec{
				Name:        t,
				Description: fmt.Sprintf("test tool %s", t),
				InputSchema: json.RawMessage(`{"type":"object"}`),
			})
		}
	}
	sdk.Serve(e)
}
