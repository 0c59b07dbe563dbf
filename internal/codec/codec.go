// Package codec holds what the wire protocols hookhost speaks share, and
// the rule that each protocol's shapes are defined once: in its codec
// package (chat, responses, messages), which both the gateway's front and
// the provider that speaks the protocol upstream use.
package codec
