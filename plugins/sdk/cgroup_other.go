//go:build !linux

package sdk

import "github.com/hashicorp/go-hclog"

// killOwnCgroup has nothing to kill where there are no cgroups.
func killOwnCgroup(hclog.Logger) {}
