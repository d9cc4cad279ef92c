// Package logging builds the process's slog.Logger: human-readable coloured
// output (github.com/lmittmann/tint) when writing to a terminal, JSON lines
// otherwise, or logfmt (key=value, as Prometheus logs) when asked, at a level
// chosen by flag or config. Durations are written rounded ("1m30s"), never
// as nanoseconds, in every format.
//
// Nothing secret belongs in a log line: callers log target names, classes,
// outcomes and reasons, never URLs, keys, prompts or response text.
package logging
