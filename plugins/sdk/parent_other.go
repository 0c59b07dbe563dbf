//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sdk

import "github.com/hashicorp/go-hclog"

// watchParent does nothing on systems the parent watch is not written for
// (Windows, Solaris, AIX): there, stopping plugins is left to the host.
func watchParent(hclog.Logger) {}
