// Package browser tests the daemon's status page in a real browser: an
// in-process daemon probes the built-in simulator (and a target that
// refuses connections), and Debian's chromium, driven headless through
// github.com/chromedp/chromedp, loads the page and reads what it renders,
// at laptop and at phone width.
//
// The test skips, saying how to install it, when no chromium is found
// (PATH: chromium, chromium-browser, google-chrome). When LLMPROBE_CHROMIUM
// names a binary (.ci/run sets it, installing chromium when missing) the
// test never skips: a chromium that does not start fails it.
package browser
