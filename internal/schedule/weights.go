package schedule

// Weights are the relative shares of a stream's classes, each above 0
// (a class's weight): the one rule that splits a rate among classes, or
// picks a class for an arrival, by weight. Every kind of class (the
// configuration's, the workload's, the ladder's) is split by it.
type Weights []float64

// WeightsOf is the weight of each of items.
func WeightsOf[T any](items []T, weight func(T) float64) Weights {
	w := make(Weights, len(items))
	for i, x := range items {
		w[i] = weight(x)
	}
	return w
}

// Total is the sum of the weights.
func (w Weights) Total() float64 {
	t := 0.0
	for _, x := range w {
		t += x
	}
	return t
}

// Share is class i's part of rate: rate × w[i] / Total.
func (w Weights) Share(rate float64, i int) float64 { return rate * w[i] / w.Total() }

// Split is every class's Share of rate; the shares add up to rate (up to
// rounding).
func (w Weights) Split(rate float64) []float64 {
	t := w.Total()
	out := make([]float64, len(w))
	for i, x := range w {
		out[i] = rate * x / t
	}
	return out
}

// Cumulative is the running sum of the normalised weights, its last
// element exactly 1: the table Pick searches (computed once per stream).
func (w Weights) Cumulative() []float64 {
	t := w.Total()
	out := make([]float64, len(w))
	acc := 0.0
	for i, x := range w {
		acc += x / t
		out[i] = acc
	}
	if len(out) > 0 {
		out[len(out)-1] = 1
	}
	return out
}

// Pick is the class a uniform draw u in [0, 1) falls on in cum (a
// Cumulative table): class i with probability w[i]/Total.
func Pick(cum []float64, u float64) int {
	i := 0
	for i < len(cum)-1 && u >= cum[i] {
		i++
	}
	return i
}
