package protocol

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// DefaultAnthropicVersion is the anthropic-version header sent with
// x-api-key auth unless AuthOptions or the adapter set another.
const DefaultAnthropicVersion = "2023-06-01"

// AuthOptions say where the API key comes from and how it is presented. The
// key itself is never an option value: only the name of the environment
// variable or the path of the file that holds it, so it never appears on a
// command line, in a config dump or in a log.
type AuthOptions struct {
	KeyEnv           string    // name of an environment variable holding the key
	KeyFile          string    // path of a file holding the key (surrounding whitespace trimmed)
	Style            AuthStyle // "" = the adapter's style (Adapter.AuthStyle)
	AnthropicVersion string    // sent with x-api-key auth; "" = DefaultAnthropicVersion
}

// secret is a credential. It prints, logs and marshals as sanitize.Marker
// ([redacted]), and is held by pointer so that printing a struct that holds
// it (where fmt does not call methods of unexported fields) shows only an
// address.
type secret struct{ v string }

func (*secret) String() string               { return sanitize.Marker }
func (*secret) GoString() string             { return sanitize.Marker }
func (*secret) LogValue() slog.Value         { return slog.StringValue(sanitize.Marker) }
func (*secret) MarshalText() ([]byte, error) { return []byte(sanitize.Marker), nil }

// resolveKey reads the API key. No source configured is not an error (local
// servers need none); a configured source that is missing or empty is.
func resolveKey(a AuthOptions) (*secret, error) {
	switch {
	case a.KeyEnv != "" && a.KeyFile != "":
		return nil, errors.New("auth: set the API key env var or the key file, not both")
	case a.KeyEnv != "":
		v, ok := os.LookupEnv(a.KeyEnv)
		if !ok {
			return nil, fmt.Errorf("auth: API key environment variable %s is not set", a.KeyEnv)
		}
		v = strings.TrimSpace(v)
		if v == "" {
			return nil, fmt.Errorf("auth: API key environment variable %s is empty", a.KeyEnv)
		}
		return &secret{v}, nil
	case a.KeyFile != "":
		b, err := os.ReadFile(a.KeyFile)
		if err != nil {
			// The path error names the file and the cause, never the content.
			return nil, fmt.Errorf("auth: reading API key file: %w", err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return nil, fmt.Errorf("auth: API key file %s is empty", a.KeyFile)
		}
		if strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("auth: API key file %s holds more than one line", a.KeyFile)
		}
		return &secret{v}, nil
	}
	return nil, nil
}

// authHeaders is the resolved key, ready to set on requests.
type authHeaders struct {
	key              *secret // nil: no key configured
	bearer           *secret // "Bearer " + key, built once
	style            AuthStyle
	anthropicVersion string
}

func newAuthHeaders(a AuthOptions) (authHeaders, error) {
	switch a.Style {
	case "", AuthBearer, AuthXAPIKey:
	default:
		return authHeaders{}, fmt.Errorf("auth: unknown auth style %q (valid: %s, %s)", a.Style, AuthBearer, AuthXAPIKey)
	}
	key, err := resolveKey(a)
	if err != nil {
		return authHeaders{}, err
	}
	h := authHeaders{key: key, style: a.Style, anthropicVersion: a.AnthropicVersion}
	if key != nil {
		h.bearer = &secret{"Bearer " + key.v}
	}
	if h.anthropicVersion == "" {
		h.anthropicVersion = DefaultAnthropicVersion
	}
	return h, nil
}

// apply sets the auth headers for an adapter's request header. With no key
// it sets nothing (an Authorization from extra headers stays).
func (h *authHeaders) apply(hdr map[string][]string, a Adapter) {
	if h.key == nil {
		return
	}
	style := h.style
	if style == "" {
		style = a.AuthStyle()
	}
	switch style {
	case AuthXAPIKey:
		hdr["X-Api-Key"] = []string{h.key.v}
		if len(hdr["Anthropic-Version"]) == 0 {
			hdr["Anthropic-Version"] = []string{h.anthropicVersion}
		}
	default:
		hdr["Authorization"] = []string{h.bearer.v}
	}
}

// AuthStyle is how an API expects its API key to be presented.
type AuthStyle string

// Auth styles.
const (
	AuthBearer  AuthStyle = "bearer"    // Authorization: Bearer <key> (OpenAI and compatibles)
	AuthXAPIKey AuthStyle = "x-api-key" // x-api-key: <key> (Anthropic)
)
