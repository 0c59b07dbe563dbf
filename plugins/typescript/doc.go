// Package typescript holds the Go test that runs the unit tests of the
// TypeScript plugin SDK, @hookhost/plugin (this directory's npm package),
// so that `make test` runs them. The SDK itself is TypeScript; see
// README.md.
package typescript
