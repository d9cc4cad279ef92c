package ledger

// CertFacts is what a request's TLS connection showed of the server's
// certificates: expiry times as Unix seconds, in the convention of the
// Prometheus blackbox exporter (probe_ssl_earliest_cert_expiry,
// probe_ssl_last_chain_expiry_timestamp_seconds).
type CertFacts struct {
	// LeafExpiry is the server's own (leaf) certificate's NotAfter.
	LeafExpiry int64 `json:"leaf_not_after"`
	// EarliestExpiry is the earliest NotAfter of every certificate the
	// server presented (the leaf and its intermediates).
	EarliestExpiry int64 `json:"earliest_not_after"`
	// LastChainExpiry is, over the chains verified to a trusted root, the
	// latest of each chain's earliest NotAfter: when the last valid path
	// to a root stops being valid. 0 when no chain was verified
	// (verification skipped).
	LastChainExpiry int64 `json:"last_chain_not_after,omitempty"`
}

// The words every rendering uses for a record flagged
// BufferedByIntermediary (reports, the status page), and the settings that
// cause it (docs/deploy.md#reverse-proxies, as measured through nginx).
const (
	BufferedVerdict  = "an intermediary buffers the stream: TTFT here is when it released the first tokens, up to the full response time"
	BufferedSettings = "nginx proxy_buffering on (set it off for the API's location, or have the server send X-Accel-Buffering: no), a gateway that compresses or batches responses, a load balancer that buffers HTTP/1.1 responses"
)
