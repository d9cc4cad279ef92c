package config

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestBindFlag: a bound flag defaults to its field's value and writes the
// field, parsed by the field's own rule; a key that names no field panics.
func TestBindFlag(t *testing.T) {
	tg := OneShot()
	c := Defaults()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	BindFlag(fs, &tg, "timeouts.total", "timeout-total", "")
	BindFlag(fs, &tg, "model", "model", "")
	BindFlag(fs, &tg, "classes[0].output.value", "max-tokens", "")
	BindFlag(fs, &c, "limits.max_rate", "max-rate", "")
	BindFlag(fs, &tg, "server_metrics.metrics", "server-metric", "")
	if got, want := fs.Lookup("timeout-total").DefValue, OneShot().Timeouts.Total.String(); got != want {
		t.Errorf("--timeout-total default %q, want the field's %q", got, want)
	}
	if err := fs.Parse([]string{"--timeout-total", "2s", "--model", "m", "--max-tokens", "7", "--max-rate", "300",
		"--server-metric", "a", "--server-metric", "b"}); err != nil {
		t.Fatal(err)
	}
	if tg.Timeouts.Total.D() != 2*time.Second || tg.Model != "m" || tg.Classes[0].Output.Value != 7 || c.Limits.MaxRate != 300 ||
		strings.Join(tg.ServerMetrics.Metrics, ",") != "a,b" {
		t.Errorf("fields not written: total %s, model %q, output %v, max rate %g, metrics %v",
			tg.Timeouts.Total, tg.Model, tg.Classes[0].Output.Value, c.Limits.MaxRate, tg.ServerMetrics.Metrics)
	}
	for _, bad := range []string{"-1s", "soon"} {
		if err := fs.Set("timeout-total", bad); err == nil {
			t.Errorf("--timeout-total %s accepted", bad)
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a key that names no field did not panic")
			}
		}()
		BindFlag(fs, &tg, "timeouts.nope", "nope", "")
	}()
}
