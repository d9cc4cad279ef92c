// Package replay serves golden stream fixtures over HTTP with the status,
// content type and per-event timing each fixture declares, so tests can
// assert timestamps (time to first content, gaps between chunks, idle and
// total timeouts) and not just parsing.
//
// A fixture is two files in testdata/streams/<api>/: <name>.sse, the raw
// response body exactly as a server would send it (line ends, comments and
// all), and <name>.json, its Spec (how to serve it and what a client must
// make of it). The body is served in segments: each segment ends after a
// blank line (an SSE event boundary, whatever the line-end style), and the
// server waits the segment's declared delay before writing and flushing it.
package replay
