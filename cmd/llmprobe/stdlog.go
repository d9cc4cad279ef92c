package main

import (
	"io"
	"strings"
	"sync"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// maxStdLogLine bounds one line of the standard library's log output.
const maxStdLogLine = 1024

// stdLog is where the standard library's log package writes in a running
// llmprobe process (main installs it). net/http logs there what it cannot
// return as an error, some of it server text: "Unsolicited response
// received on idle HTTP channel starting with …" quotes the bytes a target
// sent after the end of a response, which may echo the API key; the
// OpenTelemetry SDK's default error handler writes there too. Every line
// passes through the one rule (sanitize) — printable, bounded, and every
// secret the command registered replaced — before it reaches w. The nil
// *stdLog (tests) registers nothing.
type stdLog struct {
	mu      sync.Mutex
	w       io.Writer
	secrets *sanitize.Redactor   // values named by a configuration (run)
	clients []*sanitize.Redactor // the Redactors of probe's and ladder's clients
}

// Write cleans one log line and writes it to w.
func (s *stdLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	line := s.secrets.String(strings.TrimSuffix(string(p), "\n"), maxStdLogLine)
	for _, r := range s.clients {
		line = r.String(line, maxStdLogLine)
	}
	if _, err := io.WriteString(s.w, line+"\n"); err != nil {
		return 0, err
	}
	return len(p), nil
}

// useClient makes the lines redact what a client's Redactor knows (its API
// key, its secret header values).
func (s *stdLog) useClient(r *sanitize.Redactor) {
	if s == nil || r.Len() == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients = append(s.clients, r)
}

// useConfig makes the lines redact the secret values cfg names, besides
// those of every configuration seen before (a reload keeps the old ones:
// requests to a removed target may still be draining).
func (s *stdLog) useConfig(cfg *config.Config) {
	if s == nil {
		return
	}
	secrets := configSecrets(cfg)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets = s.secrets.With(secrets...)
}

// configSecrets returns the secret values a configuration names: every
// target's API key (api_key_env, api_key_file) and header_env values, as
// the daemon's clients know them. One that cannot be read is skipped: what
// llmprobe cannot read, it cannot send, nor see echoed.
func configSecrets(cfg *config.Config) []string {
	var out []string
	for _, t := range cfg.Targets {
		if k, err := t.APIKey(); err == nil {
			out = append(out, k)
		}
		if h, err := t.ResolvedHeaders(); err == nil {
			for name := range t.HeaderEnv {
				out = append(out, h[name])
			}
		}
	}
	return out
}
