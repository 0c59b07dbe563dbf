package plugintest_test

// protocols are the ways the tests run a plugin: in-process, then over each
// protocol version the wire package serves.
var protocols = []int{0, 1, 2}
