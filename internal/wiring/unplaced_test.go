package wiring

import "regexp"

var position = regexp.MustCompile(`:\d+:\d+: `)

// unplaced is an error's text without its line:column positions, for tests
// that assert "file: key: message".
func unplaced(err error) string { return position.ReplaceAllString(err.Error(), ": ") }
