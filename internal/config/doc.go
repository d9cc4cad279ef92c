// Package config loads llmprobe's configuration with koanf: built-in
// defaults, then a YAML file, then LLMPROBE_<SECTION>__<KEY> environment
// variables, then command-line flags, each layer overriding the one before.
//
// Validation is strict: unknown keys, malformed durations, out-of-range
// values, duplicate or label-unsafe target names and literal secrets are all
// rejected, every problem is reported at once, and each message names the
// source (file, environment variable or flag) and the key, for example
// "config/foo.yaml: targets[0].timeouts.total: …". Secrets are never literal:
// API keys come from api_key_env or api_key_file, secret headers from
// header_env. Redacted returns a copy safe to show on /config.
//
// The package describes; it imports no domain package. What only the
// domain can check (an API name, an arrival process, a prompt file) is
// checked by Checks that internal/wiring hands to LoadWith or Validate, by
// the parsers that own those values, and reported with the same file and
// key. Defaults are typed values (Defaults, DefaultTarget, DefaultClass);
// OneShot is the profile of the one-shot commands.
//
// The package starts nothing: it only reads and checks.
package config
