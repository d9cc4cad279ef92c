// Package docs checks the README against the repository: every file it
// mentions exists, it opens with the run and test commands, and CI runs
// the test command it gives.
package docs
