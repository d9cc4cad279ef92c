package logging

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestParseLevel(t *testing.T) {
	tests := []struct {
		in      string
		want    slog.Level
		wantErr bool
	}{
		{"debug", slog.LevelDebug, false},
		{"INFO", slog.LevelInfo, false},
		{"", slog.LevelInfo, false},
		{"warning", slog.LevelWarn, false},
		{"error", slog.LevelError, false},
		{"loud", 0, true},
	}
	for _, tc := range tests {
		got, err := ParseLevel(tc.in)
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v, err %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"": FormatAuto, "json": FormatJSON, "Text": FormatText, "auto": FormatAuto, "logfmt": FormatLogfmt} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Error("ParseFormat(xml) accepted")
	}
}

func TestNewFormatsAndLevels(t *testing.T) {
	tests := []struct {
		name     string
		format   Format
		level    slog.Level
		wantJSON bool
		wantText string
	}{
		{"auto on a non-terminal is JSON", FormatAuto, slog.LevelInfo, true, ""},
		{"json", FormatJSON, slog.LevelDebug, true, ""},
		{"text has no colour off a terminal", FormatText, slog.LevelInfo, false, "probe finished"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := New(&buf, tc.level, tc.format)
			l.Debug("debug line")
			l.Info("probe finished", "target", "a")
			out := buf.String()
			if strings.Contains(out, "debug line") != (tc.level <= slog.LevelDebug) {
				t.Errorf("level %v: output %q", tc.level, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			last := lines[len(lines)-1]
			var m map[string]any
			isJSON := json.Unmarshal([]byte(last), &m) == nil
			if isJSON != tc.wantJSON {
				t.Fatalf("JSON = %v, want %v: %q", isJSON, tc.wantJSON, last)
			}
			if isJSON && (m["msg"] != "probe finished" || m["target"] != "a") {
				t.Errorf("JSON line = %v", m)
			}
			if !isJSON && (!strings.Contains(last, tc.wantText) || strings.Contains(last, "\x1b[")) {
				t.Errorf("text line = %q", last)
			}
		})
	}
}

func TestLevelVarChangesAtRunTime(t *testing.T) {
	var buf bytes.Buffer
	v := new(slog.LevelVar)
	v.Set(slog.LevelWarn)
	l := New(&buf, v, FormatJSON)
	l.Info("hidden")
	v.Set(slog.LevelInfo)
	l.Info("shown")
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.Contains(out, "shown") {
		t.Errorf("output = %q", out)
	}
}

func TestSetupRejectsBadInput(t *testing.T) {
	if _, _, err := Setup(io.Discard, "nope", "json"); err == nil {
		t.Error("bad level accepted")
	}
	if _, _, err := Setup(io.Discard, "info", "nope"); err == nil {
		t.Error("bad format accepted")
	}
	if l, v, err := Setup(io.Discard, "debug", "json"); err != nil || l == nil || v.Level() != slog.LevelDebug {
		t.Errorf("Setup = %v, %v, %v", l, v, err)
	}
}

// TestSetupWritesToItsWriter: the logger writes to the writer it was given
// (the subcommand's stderr), at the parsed level, and its LevelVar changes
// the level at run time.
func TestSetupWritesToItsWriter(t *testing.T) {
	var buf bytes.Buffer
	l, v, err := Setup(&buf, "warn", "json")
	if err != nil {
		t.Fatal(err)
	}
	l.Info("hidden")
	l.Warn("shown")
	v.Set(slog.LevelInfo)
	l.Info("now shown")
	out := buf.String()
	if strings.Contains(out, "hidden") || !strings.Contains(out, `"msg":"shown"`) || !strings.Contains(out, `"msg":"now shown"`) {
		t.Errorf("output = %q", out)
	}
}

// TestDurationsReadable: every format writes a duration in the one human
// format (durfmt.Format, as reports and pages do), never as nanoseconds (slog's JSON handler alone would write
// 90000000000), nested in a group too.
func TestDurationsReadable(t *testing.T) {
	for _, f := range []Format{FormatJSON, FormatLogfmt, FormatText} {
		t.Run(string(f), func(t *testing.T) {
			var buf bytes.Buffer
			l := New(&buf, slog.LevelInfo, f)
			l.Info("target recovered", "down_for", 90*time.Second+123*time.Millisecond, slog.Group("ladder", "took", 2*time.Minute+5*time.Second+400*time.Millisecond),
				"lag", 1234567*time.Nanosecond, "tiny", 1500*time.Nanosecond)
			out := buf.String()
			for _, want := range []string{"90.1s", "125s", "1.23ms", "1.5µs"} {
				if !strings.Contains(out, want) {
					t.Errorf("no %q in %q", want, out)
				}
			}
			for _, nanos := range []string{"90123000000", "125400000000", "1234567", "1500"} {
				if strings.Contains(out, nanos) {
					t.Errorf("nanoseconds %s in %q", nanos, out)
				}
			}
		})
	}
}

// TestLogfmt: the logfmt format writes key=value lines Prometheus' own
// logs look like, with no colour.
func TestLogfmt(t *testing.T) {
	var buf bytes.Buffer
	l, _, err := Setup(&buf, "info", "logfmt")
	if err != nil {
		t.Fatal(err)
	}
	l.Info("ladder started", "target", "sim", "steps", 5)
	out := strings.TrimSpace(buf.String())
	for _, want := range []string{"level=INFO", `msg="ladder started"`, "target=sim", "steps=5"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in %q", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") || strings.HasPrefix(out, "{") {
		t.Errorf("not logfmt: %q", out)
	}
}
