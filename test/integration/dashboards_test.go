package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/dashgen"
)

// rulesFile is the repository's generated rule file, loaded by the stack's
// Prometheus so recording-rule panels have data.
func rulesFile(t *testing.T) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(here), "..", "..", filepath.FromSlash(dashgen.RulesFile))
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("rule file: %v", err)
	}
	return p
}

// dashboardQueries runs every panel query of every dashboard, variables
// substituted, against the real Prometheus, and fails on a query that errors
// or returns nothing when it must have data (recording rules are loaded and
// a ladder runs at start, so rule and ladder panels must have
// data too).
func dashboardQueries(t *testing.T, st stack) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	vars := dashgen.DefaultVariables()
	vars["target"], vars["class"] = "sim", "chat"
	deadline := time.Now().Add(3 * time.Minute)
	for _, q := range dashgen.Queries() {
		expr := dashgen.Substitute(q.Expr, vars)
		t.Run(fmt.Sprintf("%s/%s/%s", q.Dashboard, q.Panel, q.RefID), func(t *testing.T) {
			for {
				n, err := seriesCount(ctx, st.promURL, expr, q.Instant)
				if err != nil {
					t.Fatalf("query failed: %v\n%s", err, expr)
				}
				if n > 0 || q.Expect == dashgen.ExpectMaybe {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("no data (expected: %s):\n%s", q.Expect, expr)
				}
				time.Sleep(2 * time.Second)
			}
		})
	}
}

// seriesCount runs an instant query, or a range query over the last five
// minutes, and returns how many series it returned.
func seriesCount(ctx context.Context, promURL, expr string, instant bool) (int, error) {
	if instant {
		res, err := query(ctx, promURL, expr)
		return len(res), err
	}
	return queryRange(ctx, promURL, expr, 5*time.Minute, 5*time.Second)
}
