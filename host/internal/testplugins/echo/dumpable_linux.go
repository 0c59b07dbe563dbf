package main

import (
	"fmt"
	"syscall"
)

// getDumpable reads the plugin's own dumpable flag: what the SDK set.
func getDumpable() (int, error) {
	r, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_DUMPABLE, 0, 0)
	if errno != 0 {
		return 0, fmt.Errorf("prctl(PR_GET_DUMPABLE): %w", errno)
	}
	return int(r), nil
}

// setDumpable undoes what the SDK did, to play a plugin that does not.
func setDumpable() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 1, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", errno)
	}
	return nil
}
