package logging

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/term"

	"github.com/llmprobe/llmprobe/internal/durfmt"
)

// Format selects the output format.
type Format string

// Formats.
const (
	FormatAuto   Format = "auto"   // text (tint) on a terminal, JSON otherwise
	FormatText   Format = "text"   // tint, colour only on a terminal
	FormatLogfmt Format = "logfmt" // key=value lines (slog's text handler), as Prometheus logs by default
	FormatJSON   Format = "json"
)

// ParseLevel parses debug, info, warn (or warning) and error, case-insensitively.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("logging: unknown level %q (want debug, info, warn or error)", s)
}

// ParseFormat parses auto, logfmt, json and text.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case "":
		return FormatAuto, nil
	case FormatAuto, FormatText, FormatLogfmt, FormatJSON:
		return f, nil
	}
	return "", fmt.Errorf("logging: unknown format %q (want auto, logfmt, json or text)", s)
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// New returns a logger writing to w at level in format. The level is a
// slog.Leveler so a *slog.LevelVar can change it at run time (on reload).
// Every format writes a duration as a rounded Go duration ("1m30s",
// "12.35ms"), never as a count of nanoseconds (Durations).
func New(w io.Writer, level slog.Leveler, format Format) *slog.Logger {
	tty := IsTerminal(w)
	if format == FormatAuto || format == "" {
		format = FormatJSON
		if tty {
			format = FormatText
		}
	}
	switch format {
	case FormatText:
		return slog.New(tint.NewTextHandler(w, &tint.Options{Level: level, TimeFormat: time.TimeOnly, NoColor: !tty, ReplaceAttr: Durations}))
	case FormatLogfmt:
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: Durations}))
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: Durations}))
}

// Durations is a slog ReplaceAttr function: a time.Duration value becomes
// the one human duration format of reports and pages (durfmt.Format: "30s",
// "90s", "12.3ms"). slog's JSON handler would write nanoseconds
// (30000000000), which a person reading the line cannot.
func Durations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(durfmt.Format(a.Value.Duration()))
	}
	return a
}

// Setup parses level and format and returns a logger writing to w plus the
// LevelVar that controls it.
func Setup(w io.Writer, level, format string) (*slog.Logger, *slog.LevelVar, error) {
	l, err := ParseLevel(level)
	if err != nil {
		return nil, nil, err
	}
	f, err := ParseFormat(format)
	if err != nil {
		return nil, nil, err
	}
	v := new(slog.LevelVar)
	v.Set(l)
	return New(w, v, f), v, nil
}
