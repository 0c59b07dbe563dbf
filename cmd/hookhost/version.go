package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version and commit are set at build time by make build and make
// release, with -ldflags "-X main.version=v1.2.3 -X main.commit=1a2b3c4".
// Left empty, what the go command recorded in the binary is used: it
// cannot record a commit when building in a linked git worktree or with
// -buildvcs=false, which is why a release names it explicitly.
var (
	version string
	commit  string
)

// buildInfo is what the go command recorded in the binary, or nil.
func buildInfo() *debug.BuildInfo {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	return info
}

// versionLine is what `hookhost version` prints:
//
//	hookhost v0.1.0 (commit 1a2b3c4, 2026-11-27T05:00:00Z, go1.26.8 linux/amd64; plugin protocols 1, 2)
//
// The version is the stamped one, else the module's: the tag for
// `go install github.com/hookhost/hookhost/cmd/hookhost@v0.1.0`, a
// pseudo-version for a build in a git checkout, "devel" when the go
// command knew neither. The commit, its time and "-dirty" (uncommitted
// changes) come from the build's VCS settings when it had them.
func versionLine(stampedVersion, stampedCommit string, info *debug.BuildInfo) string {
	v, rev := stampedVersion, stampedCommit
	var details []string
	settings := map[string]string{}
	if info != nil {
		if v == "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
	}
	if rev == "" && settings["vcs.revision"] != "" {
		rev = settings["vcs.revision"]
		if len(rev) > 7 {
			rev = rev[:7]
		}
		if settings["vcs.modified"] == "true" {
			rev += "-dirty"
		}
	}
	if rev != "" {
		details = append(details, "commit "+rev)
	}
	if t := settings["vcs.time"]; t != "" {
		details = append(details, t)
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	goVersion := runtime.Version()
	if info != nil && info.GoVersion != "" {
		goVersion = info.GoVersion
	}
	details = append(details, goVersion+" "+runtime.GOOS+"/"+runtime.GOARCH)
	return fmt.Sprintf("hookhost %s (%s; plugin protocols %s)", v, strings.Join(details, ", "), protocolVersions())
}
