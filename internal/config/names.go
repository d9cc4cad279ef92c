package config

import "regexp"

// NameRule says what ValidName accepts, for messages.
const NameRule = "1-63 of [a-z0-9_.-] starting with a letter or digit"

var nameRule = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,62}$`)

// ValidName reports whether s may name a target, a class or a region (the
// one rule: NameRule). Such a name becomes a metric label and is echoed on
// pages, in logs and in /probe's answers, so nothing else is ever one:
// Validate refuses any other, and /probe quotes a requested target back
// only when it passes.
func ValidName(s string) bool { return nameRule.MatchString(s) }
