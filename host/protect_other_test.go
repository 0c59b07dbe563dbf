//go:build unix && !linux

package host

func environHelper() (int, bool) { return 0, false }
