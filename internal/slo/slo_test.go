package slo

import (
	"math"
	"testing"
)

// TestTiers: the page tiers burn faster than the ticket tiers, each tier's
// short window is shorter than its long one, and BurnRate is the
// workbook's factor × (1 − objective).
func TestTiers(t *testing.T) {
	page, ticket := PageTiers(), TicketTiers()
	if len(page) == 0 || len(ticket) == 0 {
		t.Fatal("no tiers")
	}
	for _, tier := range append(page, ticket...) {
		if tier.Short >= tier.Long || tier.Factor <= 0 {
			t.Errorf("tier %+v: want 0 < short < long and a positive factor", tier)
		}
	}
	if page[len(page)-1].Factor <= ticket[0].Factor {
		t.Errorf("the slowest page tier (%v×) does not burn faster than the fastest ticket tier (%v×)", page[len(page)-1].Factor, ticket[0].Factor)
	}
	if got := page[0].BurnRate(0.995); math.Abs(got-0.072) > 1e-12 {
		t.Errorf("14.4× of a 99.5%% objective = %v, want 0.072", got)
	}
	if !(0 < LatencyObjective && LatencyObjective < 1 && 0 < AvailabilityObjective && AvailabilityObjective < 1) {
		t.Error("objectives must be fractions")
	}
}
