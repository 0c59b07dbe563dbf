// Package pythonguard holds pyguard, a hookhost guard plugin written in
// Python with the SDK in plugins/python (pyguard.py, its policy.toml and
// example.toml), and the Go tests that run it under the real host. There
// is no Go code to import here; see README.md.
package pythonguard
