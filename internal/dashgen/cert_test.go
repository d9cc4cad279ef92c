package dashgen

import (
	"strings"
	"testing"
	"time"
)

func TestCertExpiryOptions(t *testing.T) {
	tests := []struct {
		name         string
		ticket, page time.Duration
		ok           bool
		want         []string // the thresholds in the rules, seconds
	}{
		{"defaults", 0, 0, true, []string{"< 1209600", "< 172800"}},
		{"configured", 30 * 24 * time.Hour, 7 * 24 * time.Hour, true, []string{"< 2592000", "< 604800"}},
		{"page after ticket", 24 * time.Hour, 48 * time.Hour, false, nil},
		{"negative", -time.Hour, 0, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultRuleOptions()
			o.CertExpiryTicket, o.CertExpiryPage = tt.ticket, tt.page
			f, err := Rules(o)
			if (err == nil) != tt.ok {
				t.Fatalf("Rules: %v, want ok %v", err, tt.ok)
			}
			if !tt.ok {
				return
			}
			var got []string
			for _, g := range f.Groups {
				for _, r := range g.Rules {
					if r.Alert == "LLMProbeCertificateExpiringSoon" {
						got = append(got, r.Labels["severity"]+" "+r.Expr[strings.LastIndex(r.Expr, "<"):])
					}
				}
			}
			want := []string{"ticket " + tt.want[0], "page " + tt.want[1]}
			if strings.Join(got, ";") != strings.Join(want, ";") {
				t.Errorf("certificate alerts %q, want %q", got, want)
			}
		})
	}
}
