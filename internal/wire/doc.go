// Package wire is the one place where hookhost's hook contract (package
// hooks) meets the plugin protocol (packages pluginv1 and pluginv2,
// generated from plugin.proto and pluginv2.proto). One table (table.go)
// ties every hook to its version 1 messages and their conversions; both
// protocol versions are driven by it:
//
//   - Client (version 1: one unary RPC per hook call) and V2Client
//     (version 2: one long-lived stream per plugin carrying every call,
//     multiplexed by id) are the host's side, both a Conn. They turn
//     failures into errors the Bus classifies with errors.Is:
//     hooks.ErrUnavailable when the process is gone, context.DeadlineExceeded
//     when the plugin missed its deadline, hooks.ErrPanicked,
//     hooks.ErrMalformed, hooks.ErrRefused.
//   - RegisterV1 and RegisterV2, used inside the plugin process, serve the
//     protocol by calling a hooks.Plugin. A handler error reaches the host
//     with its text and a handler panic is recovered, so one bad call never
//     takes the plugin process down.
//
// Both sides hold the boundary's two rules on what they send (see
// boundary.go): text that is not valid UTF-8, which proto3 string fields
// cannot carry, is repaired with U+FFFD and reported; and messages have
// size limits (Settings): the host refuses to send a request over its limit
// (hooks.ErrRefused) and rejects an answer over its limit from the length
// prefix, before reading it (ErrMalformed), while the SDK's server accepts
// any request up to MaxMessageSize.
//
// Presence is preserved where the contract gives it meaning: an unset
// response field is "no opinion" (a nil result), and a RequestPatch field is
// applied only when it is present. Where the contract gives it none, the
// conversion normalises: an empty list or byte string arrives as nil.
//
// What an answer may say (roles, tool names, sizes of results) is the
// hooks package's to check, for every plugin alike; this package checks
// only what the wire itself needs.
package wire
