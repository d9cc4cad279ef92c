package admin

import (
	"strings"
	"testing"
)

// TestConfigRedactsByValue: /config hides secrets by what they are: the
// boolean health_without_auth and a duration stay visible although their
// names look secret; a literal Authorization header's value is hidden.
func TestConfigRedactsByValue(t *testing.T) {
	cfg := map[string]any{
		"admin": map[string]any{"health_without_auth": true, "listen": ":9464"},
		"targets": []any{map[string]any{
			"headers":  map[string]any{"Authorization": "Bearer sk-hdr", "X-Org": "acme"},
			"timeouts": map[string]any{"auth_wait": "30s"},
		}},
	}
	h := Handler(Options{Gatherer: testRegistry(t), Config: func() any { return cfg }})
	body := get(t, h, "/config", nil).Body.String()
	for _, kept := range []string{`"health_without_auth": true`, `"auth_wait": "30s"`, `"X-Org": "acme"`, `"Authorization": "[redacted]"`} {
		if !strings.Contains(body, kept) {
			t.Errorf("/config lacks %s:\n%s", kept, body)
		}
	}
	if strings.Contains(body, "sk-hdr") {
		t.Errorf("/config leaks the Authorization header:\n%s", body)
	}
}
