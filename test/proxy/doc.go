// Package proxy tests llmprobe through a real reverse proxy, as users
// deploy it: Debian's nginx, run by the tests as a child process with a
// generated configuration in a temporary directory (loopback, high ports),
// in front of the simulator and of llama.cpp. It covers TLS with a test CA
// (HTTP/1.1 and HTTP/2 to the client), proxy_buffering off (the figures
// equal the direct path's within stated tolerances, certificate expiry
// exported) and on (every stream flagged buffered_by_intermediary), an
// upstream that fails behind the proxy (the proxy's 502/504, with its
// status) and the proxy's own idle-connection timeout (no request lost to
// the prober's pool, replays recorded).
//
// The tests skip when nginx is absent ($LLMPROBE_NGINX, else nginx on PATH
// or /usr/sbin/nginx), unless LLMPROBE_NGINX_REQUIRED=1 (set by .ci/run,
// which installs it) makes them fail.
package proxy
