// Package quantile is the mathematics of a distribution of durations: Dist
// keeps samples exactly up to a cap and then in log buckets 1 % wide
// (quantiles within HistogramRelativeError), Percentiles summarises one
// (nearest rank, never means, with its count), and Sketch carries one to
// another process to be merged exactly. Callers that keep their own
// bounded buckets (the live verdict, the status page's rolling store, the
// saturation rule) count by BucketOf and read them back through NewHist
// and AddBuckets. A leaf: it imports nothing of the project.
package quantile
