//go:build !linux

package host

import "syscall"

// Without cgroups a plugin's process group is all the host can stop: a
// child that leaves it with setsid outlives the plugin (see README).
type pluginCgroup struct{ dir string }

// cgroupBaseOverride has no use without cgroups; tests set it everywhere.
var cgroupBaseOverride string

func newPluginCgroup(string) *pluginCgroup { return nil }

func (*pluginCgroup) attach(*syscall.SysProcAttr, *[]string, string) (func(), error) {
	return func() {}, nil
}

func (*pluginCgroup) kill() error { return nil }

func (*pluginCgroup) remove() bool { return true }

func cgroupsOff(string) {}

func cgroupsUnavailable() string { return "cgroups are Linux's" }
