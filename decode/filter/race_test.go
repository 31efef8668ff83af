//go:build race

package filter

// The race detector makes sync.Pool drop items on purpose, so regexp's
// matcher pool allocates under -race; allocation tests skip matches there.
const raceEnabled = true
