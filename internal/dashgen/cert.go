package dashgen

import (
	"fmt"
	"strconv"
	"time"
)

// Certificate expiry thresholds of the shipped rules (RuleOptions
// CertExpiryTicket and CertExpiryPage): a ticket two weeks ahead, as the
// blackbox exporter's usual `probe_ssl_earliest_cert_expiry - time() <
// 86400 * 14`, and a page two days ahead.
const (
	DefaultCertExpiryTicket = 14 * 24 * time.Hour
	DefaultCertExpiryPage   = 2 * 24 * time.Hour
)

// certThresholds are the options' thresholds, else the mixin's, the
// defaults for zero.
func (o RuleOptions) certThresholds() (ticket, page time.Duration) {
	ticket, page = o.CertExpiryTicket, o.CertExpiryPage
	if ticket == 0 {
		ticket = time.Duration(o.Mixin.CertificateExpiry.Ticket)
	}
	if page == 0 {
		page = time.Duration(o.Mixin.CertificateExpiry.Page)
	}
	if ticket == 0 {
		ticket = DefaultCertExpiryTicket
	}
	if page == 0 {
		page = DefaultCertExpiryPage
	}
	return ticket, page
}

func (o RuleOptions) validateCert() error {
	ticket, page := o.certThresholds()
	if ticket < 0 || page < 0 || page >= ticket {
		return fmt.Errorf("dashgen: certificate expiry thresholds ticket %v, page %v: want 0 < page < ticket", ticket, page)
	}
	return nil
}

// certAlerts warn before a target's TLS certificate (or one of the
// intermediates it presents) expires: llmprobe_tls_earliest_cert_expiry_
// timestamp_seconds, blackbox_exporter's probe_ssl_earliest_cert_expiry.
// The thresholds are not scaled by TimeScale: they are dates, not windows.
func certAlerts(o RuleOptions) []Rule {
	ticket, page := o.certThresholds()
	// The severity map sets the early tier's severity (ticket by default);
	// the late tier always pages.
	rule := func(labels map[string]string, within time.Duration) Rule {
		days := strconv.FormatFloat(within.Hours()/24, 'g', -1, 64)
		return Rule{
			Alert: "LLMProbeCertificateExpiringSoon",
			Expr: fmt.Sprintf("min by (job, instance, target) (%s) - time() < %s",
				o.Mixin.sel("llmprobe_tls_earliest_cert_expiry_timestamp_seconds"), strconv.FormatFloat(within.Seconds(), 'f', -1, 64)),
			For:    o.dur("10m"),
			Labels: labels,
			Annotations: map[string]string{
				"summary": "The TLS certificate of {{ $labels.target }} expires in less than " + days + " days",
				"description": "A certificate {{ $labels.target }} presents (its own or an intermediate) expires in {{ $value | humanizeDuration }} " +
					"(llmprobe_tls_earliest_cert_expiry_timestamp_seconds, as its latest request over TLS saw it). Once it expires, every request fails transport_error/tls_expired.",
				"runbook_url": o.Mixin.runbookURL("LLMProbeCertificateExpiringSoon"),
			},
		}
	}
	const name = "LLMProbeCertificateExpiringSoon"
	return []Rule{rule(o.Mixin.alertLabels(name), ticket), rule(o.Mixin.alertLabels(name, "severity", "page"), page)}
}
