// Package hostpressure runs the built llmprobe binary on a host under CPU
// trouble the prober cannot see from inside Go: other processes holding
// the cores (busy loops) and a cgroup v1 CPU quota around the prober
// (root only). The verdict must name the host as the cause, with its
// evidence, and a quiet host must come out valid, or invalid with a host
// cause (the machine is shared). The tests skip under -short.
package hostpressure
