package host

import (
	"bufio"
	"bytes"
	"debug/buildinfo"
	"os"
	"path/filepath"
	"strings"
)

// langKind is what a plugin's executable is written in, as far as the
// host can tell from the file, so that a fix text points at tools its
// author has: Go advice (sdk.Serve, plugins/sdk) means nothing to the
// author of a Python script.
type langKind int

const (
	langUnknown langKind = iota // unreadable, or an attached plugin
	langGo                      // a Go binary
	langPython
	langJS // JavaScript or TypeScript, run by Node, Deno or Bun
	langScript
	langNative // any other binary
)

// language is what detectLanguage found out about a plugin's executable.
type language struct {
	kind langKind
	// hookhost is set for a Go binary linked against hookhost's module,
	// whose author has plugins/sdk at hand.
	hookhost bool
	// interp is the #! line split into words ("/usr/bin/env", "python3"),
	// nil for a binary.
	interp []string
}

// protocolDoc is where the plugin protocol is written down, for plugin
// authors in every language; its section anchors are fixed.
const protocolDoc = "PROTOCOL.md"

// PROTOCOL.md's section anchors that fix texts link to.
const (
	secHandshake   = "handshake"
	secAutoMTLS    = "automtls"
	secHealth      = "health"
	secController  = "controller"
	secStdio       = "standard-streams-and-logging"
	secEnvironment = "environment"
	secVersions    = "protocol-versions-v1-and-v2"
)

func docLink(section string) string { return protocolDoc + "#" + section }

// detectLanguage reads the #! line, the file name and, for a Go binary,
// its build information. It reads at most a line and the binary's build
// information section, and never runs anything.
func detectLanguage(path string) language {
	f, err := os.Open(path)
	if err != nil {
		return language{kind: langUnknown}
	}
	defer f.Close()
	head, _ := bufio.NewReaderSize(f, 512).Peek(512)
	if line, ok := bytes.CutPrefix(head, []byte("#!")); ok {
		line, _, _ = bytes.Cut(line, []byte("\n"))
		interp := strings.Fields(string(line))
		l := language{kind: byExtension(path), interp: interp}
		if k := byInterpreter(interp); k != langUnknown {
			l.kind = k
		}
		if l.kind == langUnknown {
			l.kind = langScript
		}
		return l
	}
	if info, err := buildinfo.ReadFile(path); err == nil {
		l := language{kind: langGo}
		if info.Main.Path == hookhostModule {
			l.hookhost = true
		}
		for _, d := range info.Deps {
			if d.Path == hookhostModule {
				l.hookhost = true
			}
		}
		return l
	}
	if k := byExtension(path); k != langUnknown {
		return language{kind: k}
	}
	return language{kind: langNative}
}

const hookhostModule = "github.com/hookhost/hookhost"

func byExtension(path string) langKind {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".py":
		return langPython
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts":
		return langJS
	}
	return langUnknown
}

// byInterpreter names the language of a #! line, looking through env (and
// its -S) at the program it runs.
func byInterpreter(interp []string) langKind {
	for _, w := range interp {
		if strings.HasPrefix(w, "-") || strings.Contains(w, "=") {
			continue
		}
		base := filepath.Base(w)
		switch {
		case base == "env":
			continue
		case strings.HasPrefix(base, "python") || strings.HasPrefix(base, "pypy"):
			return langPython
		case base == "node" || strings.HasPrefix(base, "nodejs") || base == "deno" || base == "bun" ||
			base == "ts-node" || base == "tsx":
			return langJS
		}
		return langUnknown
	}
	return langUnknown
}

// name is the language as a fix text calls it.
func (l language) name() string {
	switch l.kind {
	case langGo:
		return "Go"
	case langPython:
		return "Python"
	case langJS:
		return "TypeScript/JavaScript"
	case langScript:
		return "script"
	case langNative:
		return "native binary"
	}
	return "plugin"
}

// howTo is the closing part of a fix for a plugin that got part of the
// protocol wrong: the SDK that gets it right in the plugin's language, and
// the PROTOCOL.md section that says how to get it right by hand.
func (l language) howTo(section string) string {
	doc := docLink(section)
	switch l.kind {
	case langGo:
		return "serve the plugin with sdk.Serve from " + hookhostModule + "/plugins/sdk, which does this for you, or see " + doc
	case langPython:
		return "use the Python SDK, hookhost-plugin (plugins/python in hookhost's repository), which does this for you, or see " + doc
	case langJS:
		return "use the TypeScript/JavaScript SDK, @hookhost/plugin (plugins/typescript in hookhost's repository), which does this for you, or see " + doc
	}
	return "see " + doc + " in hookhost's repository"
}

// rebuild is the fix for a plugin built against another version of the
// plugin protocol.
func (l language) rebuild(section string) string {
	switch l.kind {
	case langGo:
		if l.hookhost {
			return "rebuild the plugin against this hookhost's plugins/sdk"
		}
		return "serve the plugin with sdk.Serve from " + hookhostModule + "/plugins/sdk, or see " + docLink(section)
	case langPython:
		return "update the plugin's hookhost-plugin SDK to this hookhost's (plugins/python), or see " + docLink(section)
	case langJS:
		return "update the plugin's @hookhost/plugin SDK to this hookhost's (plugins/typescript), or see " + docLink(section)
	}
	return "see " + docLink(section) + " in hookhost's repository"
}

// isScript reports whether the executable is run by an interpreter named
// on its #! line.
func (l language) isScript() bool { return len(l.interp) > 0 }

// looksLikeText reports whether a file begins as text would: no NUL byte
// in its first 512 bytes, which every binary format has.
func looksLikeText(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 512)
	n, _ := f.Read(buf)
	return n > 0 && bytes.IndexByte(buf[:n], 0) < 0
}
