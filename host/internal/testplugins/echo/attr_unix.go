//go:build unix

package main

import "syscall"

// childAttr makes a child leave the plugin's session and process group
// when escape is set.
func childAttr(escape bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: escape}
}
