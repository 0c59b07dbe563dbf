//go:build !unix

package host

import "syscall"

// Without process groups only the plugin itself can be stopped; its
// children are its own responsibility.
func procAttr() *syscall.SysProcAttr { return nil }

func killGroup(int) error { return nil }
