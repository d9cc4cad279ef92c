package wiring

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/protocol/sse"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// ClientOptions are what a client needs beyond its target's description.
type ClientOptions struct {
	// Buffers is the process-wide bound on buffered event bytes
	// (limits.max_buffered_bytes), shared by every client of the process.
	Buffers *sse.Budget
	Logger  *slog.Logger
	// Hook is set on the returned protocol.Target (tracing); nil = none.
	Hook func(ctx context.Context, req *http.Request) (context.Context, func(ledger.Outcome, ledger.Reason))
}

// Buffers is the process-wide bound on buffered event bytes
// (limits.max_buffered_bytes): one per process, shared by its clients.
func Buffers(l config.Limits) *sse.Budget { return sse.NewBudget(l.MaxBufferedBytes) }

// Client builds the protocol client of a target and the protocol.Target it
// sends to: the one place a configured target becomes a client. It reads
// the API key (api_key_env, api_key_file) and header_env values, whose
// values the client's Redactor then masks wherever server text is kept.
func Client(t config.Target, o ClientOptions) (*protocol.Client, protocol.Target, error) {
	ad, err := protocol.Lookup(t.API)
	if err != nil {
		return nil, protocol.Target{}, fmt.Errorf("api: %w", err)
	}
	// The url is parsed here, once: requests join their paths to it
	// (config checked it; the error never quotes it).
	base, err := protocol.ParseBaseURL(t.URL)
	if err != nil {
		return nil, protocol.Target{}, fmt.Errorf("url: %w", err)
	}
	hdrs, err := t.ResolvedHeaders()
	if err != nil {
		return nil, protocol.Target{}, err
	}
	h := http.Header{}
	var secrets []string
	for k, v := range hdrs {
		h.Set(k, v)
		if _, fromEnv := t.HeaderEnv[k]; fromEnv {
			secrets = append(secrets, v) // header_env values are secrets by definition
		}
	}
	to := t.Timeouts
	client, err := protocol.NewClient(protocol.ClientOptions{
		Timeouts: protocol.Timeouts{Connect: to.Connect.D(), Headers: to.Headers.D(),
			FirstContent: to.FirstContent.D(), Idle: to.Idle.D(), Total: to.Total.D()},
		TLS: protocol.TLSOptions{CAFile: t.TLS.CAFile, CertFile: t.TLS.CertFile, KeyFile: t.TLS.KeyFile,
			InsecureSkipVerify: t.TLS.InsecureSkipVerify},
		DisableHTTP2:    t.HTTP1,
		IdleConnTimeout: t.IdleConnTimeout.D(),
		MaxEventBytes:   t.MaxEventBytes,
		Headers:         h,
		Buffers:         o.Buffers,
		Auth:            protocol.AuthOptions{KeyEnv: t.APIKeyEnv, KeyFile: t.APIKeyFile},
		Logger:          o.Logger,
		Redactor:        sanitize.NewRedactor(secrets...), // the client adds its API key
	})
	if err != nil {
		return nil, protocol.Target{}, err
	}
	return client, protocol.Target{URL: base, Adapter: ad, Hook: o.Hook}, nil
}
