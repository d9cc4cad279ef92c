package config

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// Redacted returns a deep copy fit for /config, by the one redaction rule
// (sanitize): URL userinfo and the values of secret-looking query
// parameters masked, secret-looking header values masked, and only the
// names of secret sources (environment variables, files) kept, never their
// content; the prompts of answer checks masked.
func (c *Config) Redacted() *Config {
	b, err := json.Marshal(c)
	if err != nil {
		return &Config{}
	}
	var out Config
	if err := json.Unmarshal(b, &out); err != nil {
		return &Config{}
	}
	for i := range out.Targets {
		t := &out.Targets[i]
		t.URL = sanitize.URL(t.URL)
		redactHeaders(t.Headers)
		for j := range t.Classes {
			redactChecks(t.Classes[j].Checks)
		}
	}
	out.Probe.redact()
	return &out
}

// redactChecks masks the prompt material of a class's checks (their
// prompts and messages), as a prompt file's content is never shown: what
// a check expects and how it is judged stay.
func redactChecks(cs []answercheck.Check) {
	for i := range cs {
		if cs[i].Prompt != "" {
			cs[i].Prompt = sanitize.Marker
		}
		for k := range cs[i].Messages {
			cs[i].Messages[k].Content = sanitize.Marker
		}
	}
}

// redactHeaders masks the values of secret-looking header names.
func redactHeaders(h map[string]string) {
	for k := range h {
		if sanitize.SecretName(k) {
			h[k] = sanitize.Marker
		}
	}
}

// APIKey reads the target's API key from api_key_env or api_key_file; ""
// with no error when neither is set. The error names the source, never the
// value.
func (t Target) APIKey() (string, error) {
	switch {
	case t.APIKeyEnv != "":
		v, ok := os.LookupEnv(t.APIKeyEnv)
		if !ok || v == "" {
			return "", fmt.Errorf("target %s: api_key_env: environment variable %s is not set", t.Name, t.APIKeyEnv)
		}
		return strings.TrimSpace(v), nil
	case t.APIKeyFile != "":
		b, err := os.ReadFile(t.APIKeyFile)
		if err != nil {
			return "", fmt.Errorf("target %s: api_key_file: %w", t.Name, unwrapPath(err))
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("target %s: api_key_file %s is empty", t.Name, t.APIKeyFile)
		}
		return v, nil
	}
	return "", nil
}

// ResolvedHeaders returns the target's extra headers with header_env values
// read from the environment; the error names the variable, never a value.
func (t Target) ResolvedHeaders() (map[string]string, error) {
	out := make(map[string]string, len(t.Headers)+len(t.HeaderEnv))
	for k, v := range t.Headers {
		out[k] = v
	}
	for h, e := range t.HeaderEnv {
		v, ok := os.LookupEnv(e)
		if !ok {
			return nil, fmt.Errorf("target %s: header_env.%s: environment variable %s is not set", t.Name, h, e)
		}
		out[h] = v
	}
	return out, nil
}
