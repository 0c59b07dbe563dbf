//go:build !linux

package sdk

// Where the OS offers no per-process switch, a plugin stays readable to
// other processes of its user: run plugins that hold secrets as users of
// their own (README, "Run an untrusted plugin as its own user").
var protectErr error
