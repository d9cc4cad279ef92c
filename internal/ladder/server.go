package ladder

import "github.com/llmprobe/llmprobe/internal/servermetrics"

// ServerMetrics reads the target's own metrics endpoint beside each step
// (a *servermetrics.Scraper): each step opens a servermetrics.Session on
// it before its first arrival and ends it once its requests settled.
type ServerMetrics = servermetrics.Source
