package ladder

import "github.com/llmprobe/llmprobe/internal/servermetrics/scrape"

// ServerMetrics reads the target's own metrics endpoint beside each step
// (a *scrape.Scraper): each step opens a scrape.Session on
// it before its first arrival and ends it once its requests settled.
type ServerMetrics = scrape.Source
