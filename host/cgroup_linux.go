package host

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hookhost/hookhost/internal/childproc"
)

// A plugin's process group holds what it spawns only until a child calls
// setsid; then killing the group misses it. So on Linux with cgroup v2,
// each plugin process is started in a cgroup of its own, made under the
// host's own cgroup and named hookhost-<host pid>-<plugin>-<n>, and
// stopping the plugin kills the cgroup, which nothing inside can leave.
// The kernel puts the process there as it is created (clone3's
// CLONE_INTO_CGROUP), so not even its first child escapes.
//
// Where cgroup v2 is not mounted, the host may not make cgroups under its
// own (not root, no delegation), or the kernel lacks cgroup.kill (before
// 5.14) or CLONE_INTO_CGROUP (before 5.7), plugins run as before, in a
// process group only: the reason is logged once at DEBUG.
//
// A host that is SIGKILLed kills nothing. Its plugins then get the kernel's
// parent-death signal, and the SDKs kill the cgroup named by
// handshake.CgroupEnv on their way out; cgroups left behind by a dead host
// (a plugin without an SDK) are killed and removed when the next host
// starts plugins under the same cgroup.

// pluginCgroup is the cgroup one plugin process runs in.
type pluginCgroup struct{ dir string }

var cgroupState struct {
	once sync.Once
	base string // the directory plugin cgroups are made in; "" when none are
	off  atomic.Bool
	why  atomic.Pointer[string] // why cgroups are off, once found
	seq  atomic.Uint64
}

// cgroupBaseOverride, when set (tests), replaces the host's own cgroup
// directory as the place plugin cgroups are made in.
var cgroupBaseOverride string

// cgroupsOff turns plugin cgroups off for the rest of the process and
// records why, the first time.
func cgroupsOff(why string) {
	if cgroupState.off.CompareAndSwap(false, true) {
		cgroupState.why.Store(&why)
	}
}

// cgroupsUnavailable says why plugins run without cgroups, "" when they
// run in them (or none has been started yet).
func cgroupsUnavailable() string {
	if p := cgroupState.why.Load(); p != nil {
		return *p
	}
	return ""
}

func cgroupBase() string {
	cgroupState.once.Do(func() {
		base, err := ownCgroupDir()
		if cgroupBaseOverride != "" {
			base, err = cgroupBaseOverride, nil
		}
		if err != nil {
			cgroupsOff(err.Error())
			return
		}
		cgroupState.base = base
		sweepDeadHosts(base)
	})
	if cgroupState.off.Load() {
		return ""
	}
	return cgroupState.base
}

// ownCgroupDir finds the host's own cgroup v2 directory: the cgroup2
// mount in /proc/self/mountinfo joined with the "0::" line of
// /proc/self/cgroup.
func ownCgroupDir() (string, error) {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("cannot read /proc/self/mountinfo: %w", err)
	}
	mount := ""
	sc := bufio.NewScanner(bytes.NewReader(mounts))
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(pre); len(f) >= 5 && f[3] == "/" {
			mount = f[4]
			break
		}
	}
	if mount == "" {
		return "", errors.New("no cgroup v2 hierarchy is mounted")
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("cannot read /proc/self/cgroup: %w", err)
	}
	for _, l := range strings.Split(string(own), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			return filepath.Join(mount, filepath.Clean("/"+p)), nil
		}
	}
	return "", errors.New("the host is in no cgroup v2 (no 0:: line in /proc/self/cgroup)")
}

// newPluginCgroup makes the cgroup for one start of the plugin name, nil
// when plugins run without cgroups.
func newPluginCgroup(name string) *pluginCgroup {
	base := cgroupBase()
	if base == "" {
		return nil
	}
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' {
			return r
		}
		return '_'
	}, name)
	dir := filepath.Join(base, fmt.Sprintf("hookhost-%d-%s-%d", os.Getpid(), safe, cgroupState.seq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		cgroupsOff(fmt.Sprintf("cannot make a cgroup under %s: %v", base, err))
		return nil
	}
	cg := &pluginCgroup{dir: dir}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		cg.remove()
		cgroupsOff("the kernel has no cgroup.kill (Linux 5.14 or later has)")
		return nil
	}
	return cg
}

// attach has a process started with attr begin in the cgroup, and tells
// it where it is in env. Call release once the process has started.
func (cg *pluginCgroup) attach(attr *syscall.SysProcAttr, env *[]string, envName string) (release func(), err error) {
	fd, err := syscall.Open(cg.dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	attr.UseCgroupFD, attr.CgroupFD = true, fd
	*env = append(*env, envName+"="+cg.dir)
	return func() { syscall.Close(fd) }, nil
}

// kill kills every process in the cgroup. A cgroup already removed has
// none.
func (cg *pluginCgroup) kill() error {
	if cg == nil {
		return nil
	}
	err := os.WriteFile(filepath.Join(cg.dir, "cgroup.kill"), []byte("1"), 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// cgroupRemoveWait bounds how long remove waits for a killed cgroup's
// processes to go, which takes the kernel a moment.
const cgroupRemoveWait = 2 * time.Second

// remove removes the cgroup once it is empty, waiting at most
// cgroupRemoveWait; a cgroup still populated then is left for the sweep of
// a later host.
func (cg *pluginCgroup) remove() bool {
	if cg == nil {
		return true
	}
	deadline := time.Now().Add(cgroupRemoveWait)
	for {
		err := syscall.Rmdir(cg.dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return true
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sweepDeadHosts kills and removes the plugin cgroups that hosts which no
// longer run left in base: a host that was SIGKILLed with a plugin that did
// not kill its own cgroup on the way out.
func sweepDeadHosts(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), "hookhost-")
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || childproc.Alive(pid) {
			continue
		}
		cg := &pluginCgroup{dir: filepath.Join(base, e.Name())}
		if cg.kill() == nil {
			go cg.remove()
		}
	}
}
