// Package scrape fetches an inference server's Prometheus endpoint over
// HTTP beside a measurement window and folds the scrapes into a
// servermetrics.View.
//
// A Scraper fetches the endpoint with a per-scrape timeout and a bound on
// the (decompressed) body, sends no credentials, follows no redirect, and
// cleans every error text (the target's Redactor knows its secrets).
// Scraper.Start scrapes once and, with an interval, keeps sampling in a
// goroutine that stops with its context; Window.End scrapes again and
// returns the window's View (partial, saying why, when the end scrape
// fails). For llama.cpp it also reads the number of slots from /props
// beside /metrics. A Session is the window a ladder step or a probe run
// keeps: open, or the view saying why it could not be opened, or nothing.
//
// The view itself (parsing, folding, flavours, explanations) is the pure
// parent package; this one holds the network.
package scrape
