// Command ledger is a test plugin that observes post_tool_call and writes
// down, in order, the tool name of each event it handled, one line each in
// <name>.seen in the directory TESTPLUGIN_HANG_DIR names. Tool "fail"
// fails; tool "hang" appends the plugin's pid to <name>.hang and waits
// until its deadline or cancellation. Its name is the base name it was
// started as.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/plugins/sdk"
)

const hangDirEnv = "TESTPLUGIN_HANG_DIR"

type ledger struct {
	sdk.Base
	name string
}

func (l *ledger) Info() sdk.Info { return sdk.Info{Name: l.name, Version: "1.0.0"} }

func (l *ledger) PostToolCall(ctx context.Context, ev hooks.ToolCallOutcome) error {
	dir := os.Getenv(hangDirEnv)
	switch ev.Name {
	case "fail":
		return errors.New("the ledger refuses this one")
	case "hang":
		if err := appendLine(filepath.Join(dir, l.name+".hang"), strconv.Itoa(os.Getpid())); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	}
	return appendLine(filepath.Join(dir, l.name+".seen"), ev.Name)
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

func main() {
	sdk.Serve(&ledger{name: filepath.Base(os.Args[0])})
}
