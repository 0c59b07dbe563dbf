package python

// The install paths README.md documents, offline: pip builds the package
// with build isolation (no --no-build-isolation), fetching its build
// requirements from a local wheelhouse instead of the index. Debian's
// python3-setuptools-whl, python3-wheel-whl and python3-pip-whl provide
// it in /usr/share/python-wheels.

import (
	"archive/zip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookhost/hookhost/internal/testenv"
)

const debianWheels = "/usr/share/python-wheels"

const installWheelsHint = "sudo apt-get install python3-setuptools-whl python3-wheel-whl python3-pip-whl"

// wheelsIn returns the one wheel of each distribution in dir. When one is
// missing and install says how to get it, the test skips (or, under CI,
// fails) saying so; with no install command it only skips.
func wheelsIn(t *testing.T, dir, install string, dists ...string) []string {
	t.Helper()
	var found []string
	for _, d := range dists {
		m, _ := filepath.Glob(filepath.Join(dir, d+"-*.whl"))
		if len(m) == 0 {
			reason := fmt.Sprintf("no %s wheel in %s", d, dir)
			if install == "" {
				t.Skip(reason)
			}
			testenv.Skip(t, reason, install)
		}
		found = append(found, m[0])
	}
	return found
}

// pipCommand runs a virtual environment's pip with no configuration but
// its flags: no index, no cache, no user or site pip.conf.
func pipCommand(venv string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(venv, "bin", "pip"), args...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PIP_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PIP_CONFIG_FILE="+os.DevNull, "PIP_NO_CACHE_DIR=1", "PIP_DISABLE_PIP_VERSION_CHECK=1")
	return cmd
}

// sdkCopy copies the package's source to a temporary directory, so that
// pip's build files stay out of the tree.
func sdkCopy(t *testing.T) string {
	src := filepath.Join(t.TempDir(), "hookhost-plugin")
	copyTree(t, ".", src, func(rel string) bool {
		return rel == "src" || rel == "pyproject.toml" || rel == "README.md" || strings.HasPrefix(rel, "src/")
	})
	return src
}

// TestInstallDebianPath is README.md's Debian path: a venv of Debian's
// Python that sees Debian's grpcio, protobuf and cryptography, and pip
// installing the package from its path with build isolation, setuptools
// and wheel coming from Debian's wheelhouse. The installed package then
// serves a hook through the SDK's harness.
func TestInstallDebianPath(t *testing.T) {
	needPython(t, "venv", "ensurepip")
	wheelsIn(t, debianWheels, installWheelsHint, "setuptools", "wheel")
	src := sdkCopy(t)
	venv := filepath.Join(t.TempDir(), "venv")
	runOK(t, exec.Command(python, "-m", "venv", "--system-site-packages", venv))
	out := runOK(t, pipCommand(venv, "install", "--no-index", "--find-links", debianWheels, src))
	if !strings.Contains(out, "Installing build dependencies") {
		t.Errorf("pip did not build in an isolated environment:\n%s", out)
	}

	const check = `
import hookhost_plugin as hp
from hookhost_plugin.testing import Harness

class Guard(hp.Plugin):
    name, version = "guard", "1.0.0"

    def pre_tool_call(self, call):
        return hp.block("no") if "rm" in call.arguments else None

h = Harness(Guard())
print(hp.__file__)
print(h.pre_tool_call("shell", {"cmd": "rm -rf /"}).block.message, h.pre_tool_call("shell", {"cmd": "ls"}))
`
	got := strings.Split(strings.TrimSpace(runOK(t, exec.Command(filepath.Join(venv, "bin", "python"), "-c", check))), "\n")
	if len(got) != 2 || !strings.HasPrefix(got[0], venv) || got[1] != "no None" {
		t.Errorf("the installed package printed %q, want its path under %s and %q", got, venv, "no None")
	}
}

// TestInstallOtherPython builds the package's wheel with build isolation
// under the python3 on PATH when that is not Debian's (pyenv, conda,
// Homebrew), where the README's old --no-build-isolation recipe failed
// with "invalid command 'bdist_wheel'". Offline, its dependencies cannot
// be fetched, hence --no-deps; the wheelhouse is that interpreter's own
// setuptools wheel (Debian's is patched for Debian's Python) and
// Debian's wheel.
func TestInstallOtherPython(t *testing.T) {
	onPath, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH")
	}
	info := strings.Fields(runOK(t, exec.Command(onPath, "-c",
		"import ensurepip, os, sys; print(os.path.realpath(sys.executable), os.path.join(os.path.dirname(ensurepip.__file__), '_bundled'))")))
	debian, err := filepath.EvalSymlinks(python)
	if len(info) != 2 || (err == nil && info[0] == debian) {
		t.Skipf("python3 on PATH is Debian's (%v): TestInstallDebianPath covers it", info)
	}
	interp, bundled := info[0], info[1]
	wheelhouse := t.TempDir()
	for _, w := range append(wheelsIn(t, bundled, "", "setuptools"), wheelsIn(t, debianWheels, installWheelsHint, "wheel")...) {
		if err := os.Symlink(w, filepath.Join(wheelhouse, filepath.Base(w))); err != nil {
			t.Fatal(err)
		}
	}
	src := sdkCopy(t)
	venv := filepath.Join(t.TempDir(), "venv")
	runOK(t, exec.Command(interp, "-m", "venv", venv))
	out := filepath.Join(t.TempDir(), "wheels")
	log := runOK(t, pipCommand(venv, "wheel", "--no-deps", "--no-index", "--find-links", wheelhouse, "-w", out, src))
	if !strings.Contains(log, "Installing build dependencies") {
		t.Errorf("pip did not build in an isolated environment:\n%s", log)
	}

	built, _ := filepath.Glob(filepath.Join(out, "hookhost_plugin-*-py3-none-any.whl"))
	if len(built) != 1 {
		t.Fatalf("%s built %q, want one hookhost_plugin wheel", interp, built)
	}
	z, err := zip.OpenReader(built[0])
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var names []string
	for _, f := range z.File {
		names = append(names, f.Name)
	}
	for _, want := range []string{"hookhost_plugin/__init__.py", "hookhost_plugin/py.typed", "hookhost_plugin/_proto/pluginv2_pb2.py"} {
		if !slices.Contains(names, want) {
			t.Errorf("the wheel lacks %s: %q", want, names)
		}
	}
}
