//go:build !race

package chaos

// raceEnabled: the tests run with the race detector, and so does the
// llmprobe binary they build.
const raceEnabled = false
