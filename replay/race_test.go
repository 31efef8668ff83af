//go:build race

package replay_test

// The race detector's instrumentation allocates, so the allocation test
// skips under -race.
const raceEnabled = true
