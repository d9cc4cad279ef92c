package verdict

import "math"

// BinomialTail returns P(X ≥ k) for X ~ Binomial(n, p): the chance of k or
// more successes in n independent trials of probability p. It sums the
// probability mass exactly in log space (log-gamma binomial coefficients),
// over the shorter side of the distribution (1 − P(X < k) when k is below
// the mean), stopping once the terms left cannot change a float64 sum.
// Relative error is a few units in 1e-12 for n up to millions.
func BinomialTail(n, k int, p float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n || p <= 0:
		return 0
	case p >= 1:
		return 1
	}
	lp, lq := math.Log(p), math.Log1p(-p)
	lgn, _ := math.Lgamma(float64(n) + 1)
	term := func(j int) float64 {
		a, _ := math.Lgamma(float64(j) + 1)
		b, _ := math.Lgamma(float64(n-j) + 1)
		return math.Exp(lgn - a - b + float64(j)*lp + float64(n-j)*lq)
	}
	mean := float64(n) * p
	if float64(k) > mean {
		// Upper tail: terms fall from j = k upward (k is past the mode).
		sum := 0.0
		for j := k; j <= n; j++ {
			t := term(j)
			sum += t
			if t <= sum*1e-17 {
				break
			}
		}
		return min(sum, 1)
	}
	// Lower side: P(X ≤ k−1), terms falling from j = k−1 downward.
	sum := 0.0
	for j := k - 1; j >= 0; j-- {
		t := term(j)
		sum += t
		if t <= sum*1e-17 {
			break
		}
	}
	return max(1-sum, 0)
}

// lagShare is the share of dispatches a p99 may have above its limit.
const lagShare = 0.01

// LagSignificant reports whether k of n dispatches later than the limit
// are significantly more than the 1 % a dispatch-lag p99 within the limit
// allows: a one-sided binomial test, P(X ≥ k | n, p = 0.01) < 1 −
// confidence. It returns that tail probability (the p-value; 1 when there
// is nothing to test).
//
// Under the null hypothesis (the generator's p99 is at the limit, so each
// dispatch is late with probability 0.01, independently) k or more late
// ones would happen with that probability; at confidence 0.999 the
// verdict calls the generator late only when that chance is below 0.1 %.
// One late dispatch of 14 (P = 0.13) is no evidence; 12 of 300 (P ≈ 3e-5)
// is.
func LagSignificant(n, k int, confidence float64) (bool, float64) {
	if n <= 0 || k <= 0 {
		return false, 1
	}
	pv := BinomialTail(n, k, lagShare)
	return pv < 1-confidence, pv
}
