// Package logging builds the process's slog.Logger: human-readable coloured
// output (github.com/lmittmann/tint) when writing to a terminal, JSON lines
// otherwise, at a level chosen by flag or config.
//
// Nothing secret belongs in a log line: callers log target names, classes,
// outcomes and reasons, never URLs, keys, prompts or response text.
package logging
