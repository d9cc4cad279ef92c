// Package arch holds the tests that keep the code's shape: imports follow
// the data (imports_test.go: every package has a rank, and a package
// imports only lower ranks; docs/ARCHITECTURE.md's import graph is
// generated from the code and checked against it).
package arch
