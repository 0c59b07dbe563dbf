// Package childproc starts and stops the processes the host supervises
// (plugins, stdio MCP servers) so that none outlives it: each runs in a
// process group of its own, is started from one OS thread that never exits
// (the parent-death signal is tied to the forking thread), and is taken down
// with its whole group.
package childproc

import (
	"os/exec"
	"runtime"
	"sync"
)

// spawnThread runs every exec on one OS thread that never exits. On Linux a
// child's parent-death signal fires when the thread that started it exits,
// not the host process; Go ends threads whose goroutine exits while locked
// to them, so a child started from an arbitrary thread could be killed
// while the host lives on.
var spawnThread struct {
	once sync.Once
	reqs chan func()
}

// Start starts cmd from the spawn thread.
func Start(cmd *exec.Cmd) error {
	spawnThread.once.Do(func() {
		spawnThread.reqs = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: the thread must outlive every child
			for f := range spawnThread.reqs {
				f()
			}
		}()
	})
	done := make(chan error, 1)
	spawnThread.reqs <- func() { done <- cmd.Start() }
	return <-done
}
