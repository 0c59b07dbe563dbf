package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/dispatch"
	"github.com/hookhost/hookhost/hooks"
	"github.com/hookhost/hookhost/host"
)

// The fromdoc plugins are conform plugins written from the published
// documents alone: the Python one from PROTOCOL.md and the protos, with no
// SDK; the TypeScript one from the TypeScript SDK's README. They check that
// those documents are enough to write a plugin that keeps the contract.

const systemPython = "/usr/bin/python3"

// fromDocPython returns the Python fromdoc plugin's absolute path, skipping
// the test (failing it under CI) when Debian's modules are missing.
func fromDocPython(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(systemPython, "-c", "import grpc, google.protobuf, cryptography").CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("%s cannot import grpc, google.protobuf and cryptography (install Debian's python3-grpcio, python3-protobuf and python3-cryptography): %v: %s",
			systemPython, err, bytes.TrimSpace(out))
		// CI installs them (.ci/run): there a missing module is a broken
		// install, not a reason to skip.
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	p, err := filepath.Abs(filepath.Join("fromdoc", "python", "conform.py"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fromDocTypeScript returns the built TypeScript fromdoc plugin's absolute
// path, skipping the test (failing it under CI) when it has not been built,
// and failing it when the build is older than its source.
func fromDocTypeScript(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("fromdoc", "typescript"))
	if err != nil {
		t.Fatal(err)
	}
	built := filepath.Join(dir, "dist", "conform.js")
	bi, err := os.Stat(built)
	if err != nil {
		msg := fmt.Sprintf("%s is not built (build the SDK, then it: (cd plugins/typescript && npm ci && npm run build) && (cd %s && npm ci && npm run build)): %v",
			built, dir, err)
		// CI builds it before the tests: there a missing build is a broken
		// build, not a reason to skip.
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	src := filepath.Join(dir, "src", "conform.ts")
	if si, err := os.Stat(src); err != nil {
		t.Fatal(err)
	} else if si.ModTime().After(bi.ModTime()) {
		t.Fatalf("%s is older than %s: rebuild it (cd %s && npm run build)", built, src, dir)
	}
	return built
}

// TestFromDocPython checks the conform plugin written in Python from
// PROTOCOL.md alone, over both protocol versions.
func TestFromDocPython(t *testing.T) {
	t.Parallel()
	Run(t, Plugin{Language: "python-from-doc", Path: fromDocPython(t), Protocols: []int{1, 2}})
}

// TestFromDocTypeScript checks the conform plugin written in TypeScript from
// the @hookhost/plugin README alone, over both protocol versions.
func TestFromDocTypeScript(t *testing.T) {
	t.Parallel()
	Run(t, Plugin{Language: "typescript-from-doc", Path: fromDocTypeScript(t), Protocols: []int{1, 2}})
}

// TestFromDocStretches asks each fromdoc plugin, over protocol 2, the
// stretches Run does not reach: all three tool hooks for a tool it does not
// declare, stopping after a provide that gave nothing, and stopping after a
// block. A stretch answered against the rules shows as a malformed failure.
func TestFromDocStretches(t *testing.T) {
	t.Parallel()
	for _, p := range []struct {
		language string
		path     func(*testing.T) string
	}{
		{"python-from-doc", fromDocPython},
		{"typescript-from-doc", fromDocTypeScript},
	} {
		t.Run(p.language, func(t *testing.T) {
			t.Parallel()
			checkStretches(t, Plugin{Language: p.language, Path: p.path(t)})
		})
	}
}

func checkStretches(t *testing.T, p Plugin) {
	l := &log{}
	_, members := start(t, p, 2, "", l)
	ex := &exchanges{Supervised: members[0].Plugin.(*host.Supervised)}
	members[0].Plugin = ex
	bus, err := hooks.NewBus(members, hooks.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close(context.Background())
	// A native tool inside conform's namespace: conform is asked every tool
	// hook for it, in one stretch, and provides nothing for it.
	native := dispatch.Tool{
		Spec: hooks.ToolSpec{Name: "conform__native", Description: "returns its text", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Run: func(_ context.Context, args json.RawMessage) (any, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(args, &a)
			return "native says " + a.Text, nil
		},
	}
	reg, err := dispatch.NewRegistry(native)
	if err != nil {
		t.Fatal(err)
	}
	pipe := &dispatch.Pipeline{Registry: reg, Bus: bus}
	ctx := context.Background()

	n := ex.n.Load()
	out := pipe.Run(ctx, session, hooks.ToolCall{ID: "s1", Name: "conform__native", Arguments: json.RawMessage(`{"text":"shout:abc"}`)})
	if out.Path != dispatch.PathNative || out.Result.Content != `"native says ABC"` || !slices.Equal(out.ModifiedBy, []string{"conform"}) || len(out.TransformedBy) != 0 {
		t.Errorf("shout:abc to conform__native: %+v, want the native result of the modified arguments, untransformed", out)
	}
	// The stretch (modify, then no result: it stops) and a plain
	// transform_tool_result after the native call.
	if got := ex.n.Load() - n; got != 2 {
		t.Errorf("shout:abc to conform__native took %d exchanges with the plugin, want 2 (a stretch, then the transform)", got)
	}

	n = ex.n.Load()
	out = pipe.Run(ctx, session, hooks.ToolCall{ID: "s2", Name: "conform__native", Arguments: json.RawMessage(`{"text":"forbidden"}`)})
	if out.Path != dispatch.PathBlocked || !strings.Contains(out.Result.Content, "conform blocks forbidden text") {
		t.Errorf("forbidden to conform__native: %+v, want blocked", out)
	}
	// The stretch stops at the block; the blocked result is then a result
	// like any other, which transform_tool_result is asked about alone.
	if got := ex.n.Load() - n; got != 2 {
		t.Errorf("forbidden to conform__native took %d exchanges with the plugin, want 2 (a stretch that stops at the block, then the transform)", got)
	}

	for _, hook := range []hooks.Name{hooks.PreToolCall, hooks.PreToolCallCanProvideResult, hooks.TransformToolResult} {
		if f := failures(bus, hook); len(f) != 0 {
			t.Errorf("%s failures %v, want none\nhost log:\n%s", hook, f, l)
		}
	}
}
