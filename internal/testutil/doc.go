// Package testutil holds test helpers that more than one package's tests
// need: polling (Eventually, EventuallyOK), a goroutine-safe output buffer
// (SyncBuffer), simulators that stop with the test (NewSim, StartSim,
// ServeSim), self-signed certificates (SelfSigned), a basic-auth client
// (BasicAuth), the promtool binary (Promtool), the real llama.cpp server
// (RequireLlamaCpp, StartLlamaCpp, EnginePort), the llmprobe binary built
// once per test process (Binary), a bounded child process run (Run, Env)
// and a raw TCP server for hand-written HTTP (NewRawServer). Only _test.go
// files import it. It imports internal/sim, so sim's own tests cannot use
// it.
package testutil
