// Package testutil holds test helpers that more than one package's tests
// need. Only _test.go files import it.
package testutil
