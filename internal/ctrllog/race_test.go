//go:build race

package ctrllog

// raceEnabled: the tests run under the race detector (make unit), ten times slower.
const raceEnabled = true
