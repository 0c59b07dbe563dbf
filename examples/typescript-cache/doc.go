// Package typescriptcache holds the Go tests of tscache, an example plugin
// written in TypeScript with @hookhost/plugin (src/, see README.md): they
// run the built plugin (`make typescript`) under the real host, and its
// node:test unit tests.
package typescriptcache
