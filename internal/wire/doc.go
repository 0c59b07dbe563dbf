// Package wire is the one place where hookhost's hook contract (package
// hooks) meets the plugin protocol (package pluginv1, generated from
// plugin.proto). It holds the conversions between the two and the two
// adapters built on them:
//
//   - Client, used by the host, implements hooks.Plugin by calling a plugin
//     process over gRPC. It turns transport failures into errors the Bus can
//     classify: hooks.ErrUnavailable when the process is gone, and
//     context.DeadlineExceeded when the plugin missed its deadline.
//   - NewServer, used inside the plugin process, serves the protocol by
//     calling a hooks.Plugin. A handler error becomes a gRPC status error and
//     a handler panic is recovered, so one bad call never takes the plugin
//     process down.
//
// Both adapters hold the boundary's two rules on what they send (see
// boundary.go): text that is not valid UTF-8, which proto3 string fields
// cannot carry, is repaired with U+FFFD and reported; and
// messages have size limits (Settings): the Client refuses to send a request
// over its limit (hooks.ErrRefused) and rejects an answer over its limit
// from the length prefix, before reading it (ErrMalformed), while the SDK's
// server accepts any request up to MaxMessageSize.
//
// Presence is preserved where the contract gives it meaning: an unset
// response field is "no opinion" (a nil result), and a RequestPatch field is
// applied only when it is present. Where the contract gives it none, the
// conversion normalises: an empty list or byte string arrives as nil.
package wire
