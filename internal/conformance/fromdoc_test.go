package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hookhost/hookhost/internal/testenv"
	"github.com/hookhost/hookhost/plugins/typescript/tsbuild"
)

// The fromdoc plugins are conform plugins written from the published
// documents alone: the Python one from PROTOCOL.md and the protos, with no
// SDK; the TypeScript one from the TypeScript SDK's README. They check that
// those documents are enough to write a plugin that keeps the contract.

// fromDocPython returns the Python fromdoc plugin's absolute path, skipping
// the test (failing it under CI) when Debian's modules are missing.
func fromDocPython(t *testing.T) string {
	t.Helper()
	// CI installs them (.ci/run): there a missing module is a broken
	// install, not a reason to skip.
	testenv.NeedDebianPython(t)
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
		// CI builds it before the tests: there a missing build is a broken
		// build, not a reason to skip.
		testenv.Skip(t, tsbuild.NotBuiltReason, tsbuild.BuildCommand,
			fmt.Sprintf("%s is not built (by hand: (cd plugins/typescript && npm ci && npm run build) && (cd %s && npm ci && npm run build)): %v",
				built, dir, err))
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
	// The SDK it is written on answers model stages; the Python one, written
	// on the raw protocol, does not declare them and is asked hook by hook.
	Run(t, Plugin{Language: "typescript-from-doc", Path: fromDocTypeScript(t), Protocols: []int{1, 2}, ModelStages: true})
}
