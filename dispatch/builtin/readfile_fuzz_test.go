package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// Markers that exist only outside the workspace: no read may ever return
// them, in a result or in an error.
const (
	outsideContent = "OUTSIDE-CONTENT-5d1c9e"
	outsideEntry   = "outside-only-entry-8b2f"
)

// escapeTree builds a workspace whose symbolic links point outside it in
// every way a link can (absolute, relative, through "..", chained through
// another link, to a directory and to a file), and returns two read_file
// tools on it: one given the real root, one given a path through a link to
// the root, since a root reached through a link must confine just the same.
//
//	base/
//	  outside/<outsideEntry>.txt   outsideContent
//	  outside/dir/deep.txt         outsideContent
//	  outside/back -> ../root      (a way back in, from outside)
//	  sibling.txt                  outsideContent
//	  rootlink -> root
//	  root/
//	    hello.txt, sub/nested.txt  inside text
//	    abs-dir   -> base/outside
//	    abs-file  -> base/sibling.txt
//	    rel-dir   -> ../outside
//	    rel-file  -> ../sibling.txt
//	    sub/up    -> ../../outside/dir
//	    sub/upup  -> ../..
//	    chain     -> sub/up
//	    via-back  -> ../outside/back/hello.txt
//	    self      -> .
//	    loop      -> loop
//	    etc       -> /etc
//	    fuzz, sub/fuzz -> (set per input)
func escapeTree(t testing.TB) (root string, tools map[string]func(context.Context, json.RawMessage) (any, error)) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "sub"), filepath.Join(outside, "dir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(outside, outsideEntry+".txt"): outsideContent,
		filepath.Join(outside, "dir", "deep.txt"):   outsideContent,
		filepath.Join(base, "sibling.txt"):          outsideContent,
		filepath.Join(root, "hello.txt"):            "hello from inside\n",
		filepath.Join(root, "sub", "nested.txt"):    "nested inside",
	}
	for name, content := range files {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		filepath.Join(outside, "back"):     filepath.Join("..", "root"),
		filepath.Join(base, "rootlink"):    "root",
		filepath.Join(root, "abs-dir"):     outside,
		filepath.Join(root, "abs-file"):    filepath.Join(base, "sibling.txt"),
		filepath.Join(root, "rel-dir"):     filepath.Join("..", "outside"),
		filepath.Join(root, "rel-file"):    filepath.Join("..", "sibling.txt"),
		filepath.Join(root, "sub", "up"):   filepath.Join("..", "..", "outside", "dir"),
		filepath.Join(root, "sub", "upup"): filepath.Join("..", ".."),
		filepath.Join(root, "chain"):       filepath.Join("sub", "up"),
		filepath.Join(root, "via-back"):    filepath.Join("..", "outside", "back", "hello.txt"),
		filepath.Join(root, "self"):        ".",
		filepath.Join(root, "loop"):        "loop",
		filepath.Join(root, "etc"):         "/etc",
	}
	for name, target := range links {
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	tools = map[string]func(context.Context, json.RawMessage) (any, error){}
	for name, r := range map[string]string{"real root": root, "root through a link": filepath.Join(base, "rootlink")} {
		tool, err := ReadFile(r)
		if err != nil {
			t.Fatal(err)
		}
		tools[name] = tool.Run
	}
	return root, tools
}

// FuzzReadFileStaysInside reads fuzzed paths, and plants a link with a
// fuzzed target at two depths of the workspace, and checks that nothing
// from outside the workspace ever comes back.
func FuzzReadFileStaysInside(f *testing.F) {
	if runtime.GOOS == "windows" {
		f.Skip("symbolic links need privileges on Windows")
	}
	for _, s := range []struct{ path, target string }{
		{"hello.txt", "hello.txt"},
		{"abs-dir/" + outsideEntry + ".txt", ""},
		{"abs-file", ""},
		{"rel-dir", ""},
		{"rel-dir/dir/deep.txt", ""},
		{"rel-file", ""},
		{"sub/up/deep.txt", ""},
		{"sub/upup/sibling.txt", ""},
		{"sub/upup/outside", ""},
		{"chain/deep.txt", ""},
		{"via-back", ""},
		{"self/self/rel-file", ""},
		{"loop", ""},
		{"etc/passwd", ""},
		{"self/sub/../rel-dir/back/hello.txt", ""},
		{"fuzz", "../sibling.txt"},
		{"fuzz/deep.txt", "../outside/dir"},
		{"sub/fuzz", "../../outside/" + outsideEntry + ".txt"},
		{"sub/fuzz/hello.txt", ".."},
		{"fuzz/fuzz", "fuzz"},
		{"fuzz", "/proc/self/root/etc/passwd"},
		{"fuzz", "/proc/self/cwd"},
		{"fuzz/sibling.txt", "rootlink/.."},
		{".", "."},
		{"sub/fuzz", "up/../../sibling.txt"},
	} {
		f.Add(s.path, s.target, uint32(0))
	}
	root, tools := escapeTree(f)
	passwd, _ := os.ReadFile("/etc/passwd")
	firstPasswdLine, _, _ := strings.Cut(string(passwd), "\n")

	f.Fuzz(func(t *testing.T, path, target string, maxBytes uint32) {
		// The planted links are replaced for each input; a target the OS
		// refuses (NUL, too long) just leaves them absent.
		for _, link := range []string{filepath.Join(root, "fuzz"), filepath.Join(root, "sub", "fuzz")} {
			os.Remove(link)
			if target != "" {
				os.Symlink(target, link)
			}
		}
		args := map[string]any{"path": path}
		if maxBytes > 0 {
			args["max_bytes"] = maxBytes
		}
		raw, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		for name, run := range tools {
			got, err := run(context.Background(), raw)
			if err != nil {
				msg := err.Error()
				if msg == "" {
					t.Fatalf("%s: %q: empty error", name, path)
				}
				if strings.Contains(msg, outsideContent) {
					t.Fatalf("%s: %q (link -> %q): error carries outside content: %v", name, path, target, err)
				}
				if strings.Contains(msg, outsideEntry) && !strings.Contains(path+target, outsideEntry) {
					t.Fatalf("%s: %q (link -> %q): error lists an outside directory: %v", name, path, target, err)
				}
				continue
			}
			r := got.(readFileResult)
			if strings.Contains(r.Content, outsideContent) || (firstPasswdLine != "" && strings.Contains(r.Content, firstPasswdLine)) {
				t.Fatalf("%s: %q (link -> %q) read outside the workspace: %+v", name, path, target, r)
			}
			if !filepath.IsLocal(filepath.FromSlash(r.Path)) {
				t.Fatalf("%s: %q: result path %q is not inside the workspace", name, path, r.Path)
			}
			limit := uint32(defaultMaxBytes)
			if maxBytes > 0 {
				limit = maxBytes
			}
			if uint32(len(r.Content)) > limit || !utf8.ValidString(r.Content) {
				t.Fatalf("%s: %q: %d bytes returned for a limit of %d, valid UTF-8 %v", name, path, len(r.Content), limit, utf8.ValidString(r.Content))
			}
		}
	})
}
