package dashgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDashboardQueriesAgainstPrometheus runs every panel query of every
// dashboard, variables substituted, against a real Prometheus that scrapes a
// running llmprobe (see test/e2e/prometheus.sh). It is skipped unless
// LLMPROBE_PROMETHEUS_URL is set.
//
//	LLMPROBE_PROMETHEUS_URL   Prometheus base URL, e.g. http://127.0.0.1:9090
//	LLMPROBE_QUERY_WAIT       how long to retry a query that should have data (default 2m)
//	LLMPROBE_EXPECT_LADDER=1  ladder panels must have data (a ladder has completed)
//	LLMPROBE_EXPECT_RULES=0   recording-rule panels may be empty (rules not loaded)
//	LLMPROBE_DASH_TARGET      value for $target (default .*)
//	LLMPROBE_DASH_CLASS       value for $class (default .*)
func TestDashboardQueriesAgainstPrometheus(t *testing.T) {
	base := os.Getenv("LLMPROBE_PROMETHEUS_URL")
	if base == "" {
		t.Skip("LLMPROBE_PROMETHEUS_URL not set: dashboard query test needs a real Prometheus scraping llmprobe")
	}
	wait := 2 * time.Minute
	if s := os.Getenv("LLMPROBE_QUERY_WAIT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("LLMPROBE_QUERY_WAIT=%q: %v", s, err)
		}
		wait = d
	}
	vars := DefaultVariables()
	if v := os.Getenv("LLMPROBE_DASH_TARGET"); v != "" {
		vars["target"] = v
	}
	if v := os.Getenv("LLMPROBE_DASH_CLASS"); v != "" {
		vars["class"] = v
	}
	required := func(e Expect) bool {
		switch e {
		case ExpectAlways:
			return true
		case ExpectRules:
			return os.Getenv("LLMPROBE_EXPECT_RULES") != "0"
		case ExpectLadder:
			return os.Getenv("LLMPROBE_EXPECT_LADDER") == "1"
		default:
			return false
		}
	}

	deadline := time.Now().Add(wait)
	for _, q := range Queries() {
		expr := Substitute(q.Expr, vars)
		name := fmt.Sprintf("%s/%s/%s", q.Dashboard, q.Panel, q.RefID)
		t.Run(name, func(t *testing.T) {
			for {
				n, warnings, err := runQuery(base, expr, q.Instant)
				if err != nil {
					t.Fatalf("query failed: %v\n%s", err, expr)
				}
				if len(warnings) > 0 {
					t.Logf("warnings: %v", warnings)
				}
				if n > 0 || !required(q.Expect) {
					t.Logf("%d series (expect %s)", n, q.Expect)
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("no data (expect %s) after waiting until %s:\n%s", q.Expect, deadline.Format(time.RFC3339), expr)
				}
				time.Sleep(5 * time.Second)
			}
		})
	}
}

// promResponse is the Prometheus HTTP API envelope.
type promResponse struct {
	Status    string   `json:"status"`
	ErrorType string   `json:"errorType"`
	Error     string   `json:"error"`
	Warnings  []string `json:"warnings"`
	Data      struct {
		ResultType string            `json:"resultType"`
		Result     []json.RawMessage `json:"result"`
	} `json:"data"`
}

// runQuery runs an instant query, or a range query over the last 10 minutes
// with a 15 s step, and returns the number of series in the result.
func runQuery(base, expr string, instant bool) (int, []string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	now := time.Now()
	form := url.Values{"query": {expr}}
	endpoint := "/api/v1/query"
	if instant {
		form.Set("time", strconv.FormatInt(now.Unix(), 10))
	} else {
		endpoint = "/api/v1/query_range"
		form.Set("start", strconv.FormatInt(now.Add(-10*time.Minute).Unix(), 10))
		form.Set("end", strconv.FormatInt(now.Unix(), 10))
		form.Set("step", "15")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(base, "/")+endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil, fmt.Errorf("building request to %s: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("calling %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return 0, nil, fmt.Errorf("reading %s response: %w", endpoint, err)
	}
	var pr promResponse
	if err := json.Unmarshal(body, &pr); err != nil {
		return 0, nil, fmt.Errorf("decoding %s response (HTTP %d): %w", endpoint, resp.StatusCode, err)
	}
	if pr.Status != "success" {
		return 0, pr.Warnings, fmt.Errorf("%s: %s: %s", endpoint, pr.ErrorType, pr.Error)
	}
	if pr.Data.ResultType == "scalar" || pr.Data.ResultType == "string" {
		return 1, pr.Warnings, nil
	}
	return len(pr.Data.Result), pr.Warnings, nil
}
