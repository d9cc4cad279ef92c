// Package sanitize is llmprobe's one rule for text it did not write itself
// and its one redaction rule.
//
// Every string a target supplies (the model it names, a finish reason, an
// error type or code, a response header, a /v1/models field, a content
// type) passes through Redactor.String before it reaches a metric label, an
// OTel attribute, a log line, the ledger or a page: the result is valid
// UTF-8, holds only printable characters (anything else becomes U+FFFD), is
// cut at a rune boundary to a bounded length, and has every known secret
// value (an API key, a secret header's value, and each one's "Bearer "
// form), or any cut-off start of one of at least 8 bytes, replaced by
// Marker. The known secrets are the Redactor's: built from the configured
// keys where they are resolved and passed down, never held globally.
//
// URL is the redaction rule for URLs, parsed or not (userinfo and the values
// of secret-looking query parameters are replaced), SecretName the rule for
// names that hold secrets (configuration keys, header and query parameter
// names), and JSON applies both to a decoded JSON document (/config).
//
// The package is a leaf: it imports nothing of the project.
package sanitize
