//go:build !unix

package main

import "syscall"

// childAttr: without sessions there is nothing to escape from.
func childAttr(bool) *syscall.SysProcAttr { return nil }
