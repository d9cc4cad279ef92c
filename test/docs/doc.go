// Package docs checks the documentation against the repository: README.md,
// CONTRIBUTING.md, CHANGELOG.md and every file under docs/ (found by
// globbing, so a new file is covered).
//
//   - every repository path they mention exists, and every relative link
//     resolves to a file and, with an #anchor, to a heading of that file;
//   - the README stays short (at most 300 lines) and opens with the run and
//     test commands, and .ci/run runs that test command;
//   - no section title is written twice across the README and docs/;
//   - every llmprobe_* metric named exists in docs/metrics.md (generated
//     from the telemetry catalog and tested there);
//   - the configuration keys block of docs/configuration.md is generated
//     from config.Config and its loaded defaults (go test ./test/docs
//     -update rewrites it), and every configuration key named in backticks
//     exists;
//   - every flag named in backticks is a flag of some llmprobe command
//     (read from the built command's --help), and every qualified Go name
//     of the module's packages (sanitize.URL, protocol.Client.Redactor) is
//     declared;
//   - the check commands CONTRIBUTING.md gives are the ones .ci/run runs.
//
// What the documents describe ahead of the code on a branch is listed in
// aheadOfCode, and excused only while it is missing.
package docs
