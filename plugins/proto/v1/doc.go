// Package pluginv1 is the generated Go code of the hookhost plugin
// protocol, version 1 (plugin.proto beside it, the single source of truth;
// `make proto` regenerates this package). Plugin authors in Go use package
// sdk instead; other languages generate their own code from plugin.proto.
package pluginv1
