package config

import "time"

// maxSettleMax bounds ladder.settle_max: a target that has not settled in
// an hour is not waiting out a deploy.
const maxSettleMax = time.Hour

// checkSettleMax holds ladder.settle_max to 0 (do not wait) or 1s..1h.
func checkSettleMax(el *errorList, key string, d Duration) {
	if d != 0 && (d < Duration(time.Second) || d.D() > maxSettleMax) {
		el.add(key, "want 0 (do not wait) or 1s to %s, got %s", maxSettleMax, d)
	}
}
