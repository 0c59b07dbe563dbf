// Package gopool runs short functions on goroutines kept for reuse.
//
// A plugin answers each hook call on a goroutine of its own, and each
// stage of a call on another, so that a slow handler holds up nothing
// else. A new goroutine starts with a small stack and grows it, by
// copying, as the call decodes its request and runs its handler: on a
// plugin answering thousands of calls a second that copying was one of the
// largest costs of a call. A goroutine that has answered a call keeps the
// stack it grew, and waits here for the next one.
package gopool

import "sync/atomic"

// maxIdle bounds the goroutines kept waiting: past it, one that finishes
// its function ends, so a burst leaves no more than this many behind.
const maxIdle = 64

var (
	// work hands a function to a goroutine that waits for one. It is
	// unbuffered: a hand-over succeeds only when one waits.
	work = make(chan func())
	idle atomic.Int32
)

// Go runs f on a waiting goroutine, or on a new one when none waits.
func Go(f func()) {
	select {
	case work <- f:
	default:
		go worker(f)
	}
}

func worker(f func()) {
	for {
		f()
		if idle.Add(1) > maxIdle {
			idle.Add(-1)
			return
		}
		f = <-work
		idle.Add(-1)
	}
}
