package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hookhost/hookhost/internal/testenv"
)

// built is the hookhost binary the tests that run the real program share:
// one go build of this package, as a developer runs it (no ldflags).
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// hookhostBinary builds this package once and returns the binary's path.
// -buildvcs=auto: a build in a git checkout records its commit whatever
// GOFLAGS says. CGO_ENABLED=0 and -trimpath, as scripts/release.sh builds:
// TestVersionOfRelease's build then compiles nothing again, only links.
func hookhostBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "hookhost-bin-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "hookhost")
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=auto", "-o", built.bin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

func TestVersionLine(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	protocols := "; plugin protocols " + protocolVersions() + ")"
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"},
		{Key: "vcs.time", Value: "2026-11-27T05:00:00Z"},
	}
	dirty := append(slices.Clone(vcs), debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	clean := append(slices.Clone(vcs), debug.BuildSetting{Key: "vcs.modified", Value: "false"})
	cases := []struct {
		name           string
		version, stamp string
		info           *debug.BuildInfo
		want           string
	}{
		{"go install of a tag", "", "",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.1.0"}},
			"hookhost v0.1.0 (go1.26.8 " + platform + protocols},
		{"clone with changes", "", "",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261127050000-1a2b3c4d5e6f+dirty"}, Settings: dirty},
			"hookhost v0.0.0-20261127050000-1a2b3c4d5e6f+dirty (commit 1a2b3c4-dirty, 2026-11-27T05:00:00Z, go1.26.8 " + platform + protocols},
		{"no VCS stamping", "", "",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"hookhost devel (go1.26.8 " + platform + protocols},
		{"ldflags win", "v0.2.0", "9f8e7d6",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: clean},
			"hookhost v0.2.0 (commit 9f8e7d6, 2026-11-27T05:00:00Z, go1.26.8 " + platform + protocols},
		{"no build info", "", "", nil,
			"hookhost devel (" + runtime.Version() + " " + platform + protocols},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := versionLine(c.version, c.stamp, c.info); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestVersionOfPlainBuild runs `version` on a go build without ldflags
// and checks it against what `go version -m` says the go command
// recorded. In a git checkout of its own (not a linked worktree, where
// the go command records no VCS settings) that must include HEAD.
func TestVersionOfPlainBuild(t *testing.T) {
	bin := hookhostBinary(t)
	meta, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	modVersion, settings := "", map[string]string{}
	for _, line := range strings.Split(string(meta), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "mod":
			modVersion = f[2]
		case len(f) == 2 && f[0] == "build":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				settings[k] = v
			}
		}
	}
	if modVersion == "" {
		t.Fatalf("go version -m names no main module version:\n%s", meta)
	}
	want := "hookhost " + modVersion + " ("
	if modVersion == "(devel)" {
		want = "hookhost devel ("
	}
	if rev := settings["vcs.revision"]; rev != "" {
		want += "commit " + rev[:7]
		if settings["vcs.modified"] == "true" {
			want += "-dirty"
		}
		want += ", " + settings["vcs.time"] + ", "
	}
	want += runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "; plugin protocols "

	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("hookhost version: %v\n%s", err, out)
	}
	if !strings.HasPrefix(string(out), want) || strings.Count(string(out), "\n") != 1 {
		t.Errorf("hookhost version printed %q, want one line starting %q", out, want)
	}

	if head, ok := ownCheckoutHead(t); ok {
		if settings["vcs.revision"] != head {
			t.Errorf("built in a git checkout at %s, but the binary records vcs.revision %q (go version -m:\n%s)", head, settings["vcs.revision"], meta)
		}
	} else {
		t.Logf("not a git checkout of its own (a linked worktree, or no git): no commit to check against")
	}
}

// ownCheckoutHead is HEAD when this package is in a git checkout whose
// .git is a directory, which is where the go command records VCS settings.
func ownCheckoutHead(t *testing.T) (string, bool) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", false
	}
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		return "", false
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	return strings.TrimSpace(string(head)), true
}

// TestVersionOfRelease runs scripts/release.sh as make release does, for
// this platform and the host only, and checks the archive's contents, the
// checksum file, and that the static binary's `version` prints the
// version and commit it was given.
func TestVersionOfRelease(t *testing.T) {
	for _, tool := range []string{"bash", "tar", "gzip", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Skip(t, "scripts/release.sh needs "+tool, "sudo apt-get install "+tool)
		}
	}
	const version = "v9.8.7-test"
	dist := t.TempDir()
	cmd := exec.Command("../../scripts/release.sh")
	cmd.Env = append(os.Environ(), "VERSION="+version, "DIST="+dist,
		"RELEASE_TARGETS="+runtime.GOOS+"/"+runtime.GOARCH, "RELEASE_COMMANDS=cmd/hookhost")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}

	name := "hookhost_" + version + "_" + runtime.GOOS + "_" + runtime.GOARCH
	archive := filepath.Join(dist, name+".tar.gz")
	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"SHA256SUMS", name + ".tar.gz"}; !slices.Equal(names, want) {
		t.Errorf("dist holds %q, want %q", names, want)
	}

	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if want := hex.EncodeToString(sum[:]) + "  " + name + ".tar.gz\n"; string(sums) != want {
		t.Errorf("SHA256SUMS is %q, want %q", sums, want)
	}

	files := readArchive(t, archive)
	var got []string
	for n := range files {
		got = append(got, n)
	}
	slices.Sort(got)
	want := []string{name + "/", name + "/CHANGELOG.md", name + "/LICENSE", name + "/README.md", name + "/THIRD_PARTY_LICENSES",
		name + "/bin/", name + "/bin/hookhost", name + "/bin/plugins/", name + "/config.toml.example"}
	if !slices.Equal(got, want) {
		t.Fatalf("archive holds\n%q\nwant\n%q", got, want)
	}
	notices := string(files[name+"/THIRD_PARTY_LICENSES"].data)
	for _, want := range []string{"Go standard library " + runtime.Version() + ": LICENSE",
		"github.com/hashicorp/go-plugin v", "Mozilla Public License", "google.golang.org/grpc v"} {
		if !strings.Contains(notices, want) {
			t.Errorf("THIRD_PARTY_LICENSES lacks %q:\n%.500s", want, notices)
		}
	}
	host := files[name+"/bin/hookhost"]
	if host.mode&0o111 == 0 {
		t.Errorf("bin/hookhost is not executable (mode %o)", host.mode)
	}
	if runtime.GOOS == "linux" {
		exe, err := elf.NewFile(bytes.NewReader(host.data))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range exe.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("bin/hookhost names an interpreter: it is dynamically linked, want static")
			}
		}
	}
	bin := filepath.Join(t.TempDir(), "hookhost")
	if err := os.WriteFile(bin, host.data, 0o755); err != nil {
		t.Fatal(err)
	}

	out, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("hookhost version: %v\n%s", err, out)
	}
	head, err := exec.Command("git", "rev-parse", "--short=7", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	wantPrefix := "hookhost " + version + " (commit " + strings.TrimSpace(string(head))
	if !strings.HasPrefix(string(out), wantPrefix) {
		t.Errorf("released hookhost version printed %q, want it to start %q", out, wantPrefix)
	}
}

// archived is one entry of a release archive.
type archived struct {
	mode int64
	data []byte
}

// readArchive reads a .tar.gz whole, by entry name.
func readArchive(t *testing.T, archive string) map[string]archived {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	entries := map[string]archived{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return entries
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entries[h.Name] = archived{mode: h.Mode, data: data}
	}
}
