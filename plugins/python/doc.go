// Package python holds hookhost-plugin, the Python SDK for hookhost plugins
// (src/hookhost_plugin, installable with pip), its unit tests (tests/), the
// conformance plugin written with it (conform/conform.py), and the Go tests
// that run all of them: the unit tests with Debian's Python, the pip
// install into a virtual environment, and plugins under the real host.
// There is no Go code to import here; see README.md.
package python
