//go:build !race

package sdk_test

const raceEnabled = false
