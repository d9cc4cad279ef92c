package protocol

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

func TestDoGatewayErrors(t *testing.T) {
	tests := []struct {
		name   string
		code   int
		ctype  string
		body   string
		server string
		reason ledger.Reason
		errHas string
	}{
		{"nginx 502 page", 502, "text/html", "<html><center><h1>502 Bad Gateway</h1></center></html>", "nginx/1.22.1",
			ledger.ReasonGateway, "status 502 from a gateway (Server: nginx/1.22.1): it could not reach or read its upstream"},
		{"504 without a Server header", 504, "text/html", "<html>504 Gateway Time-out</html>", "",
			ledger.ReasonGateway, "status 504 from a gateway: its upstream did not answer in time"},
		{"a server's own 502 with its JSON error", 502, "application/json", `{"error":{"type":"upstream","message":"x"}}`, "vllm",
			ledger.ReasonServerError, "status 502 (upstream)"},
		{"a 500 page is the server's", 500, "text/html", "<html>500</html>", "nginx",
			ledger.ReasonServerError, "status 500"},
		{"a hostile Server header is cleaned", 502, "text/plain", "bad gateway", "evil\u202e" + strings.Repeat("x", 200),
			ledger.ReasonGateway, "(Server: evil"},
	}
	c := newClient(t, ClientOptions{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(statusHandler(tt.code, tt.ctype, tt.body, "Server", tt.server))
			defer srv.Close()
			res, rec := probe(t, c, context.Background(), srv.URL+"/v1", Params{})
			if res.Outcome != ledger.HTTPError || res.Reason != tt.reason || rec.Status != tt.code {
				t.Fatalf("result %+v status %d, want http_error/%s status %d", res, rec.Status, tt.reason, tt.code)
			}
			if !strings.Contains(res.Err, tt.errHas) || strings.ContainsAny(res.Err, "\x1b\u202e") {
				t.Errorf("error text %q, want it to hold %q, cleaned", res.Err, tt.errHas)
			}
		})
	}
}
