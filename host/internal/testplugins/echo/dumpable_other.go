//go:build !linux

package main

import "errors"

var errNoDumpable = errors.New("no dumpable flag on this system")

func getDumpable() (int, error) { return 0, errNoDumpable }

func setDumpable() error { return errNoDumpable }
