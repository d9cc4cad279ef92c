package config

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagAliases: every Prometheus-style flag and its former name set the
// same key; DeprecatedFlags names the former names given, and refuses a
// setting given under both names.
func TestFlagAliases(t *testing.T) {
	tests := []struct {
		args    []string
		key     string
		want    any
		used    [][2]string
		wantErr string
	}{
		{[]string{"--web.listen-address=127.0.0.1:7"}, "admin.listen", "127.0.0.1:7", nil, ""},
		{[]string{"--listen=127.0.0.1:8"}, "admin.listen", "127.0.0.1:8", [][2]string{{"listen", "web.listen-address"}}, ""},
		{[]string{"--web.config.file=w.yml"}, "admin.web_config_file", "w.yml", nil, ""},
		{[]string{"--web-config-file=w.yml"}, "admin.web_config_file", "w.yml", [][2]string{{"web-config-file", "web.config.file"}}, ""},
		{[]string{"--log.level=debug"}, "log.level", "debug", nil, ""},
		{[]string{"--log-level=warn", "--log-format=json"}, "log.format", "json", [][2]string{{"log-level", "log.level"}, {"log-format", "log.format"}}, ""},
		{[]string{"--log.format=logfmt"}, "log.format", "logfmt", nil, ""},
		{[]string{"--web.enable-lifecycle"}, "admin.enable_lifecycle", true, nil, ""},
		{[]string{"--listen=:1", "--web.listen-address=:2"}, "", nil, nil, "--listen and --web.listen-address"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			RegisterFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			used, err := DeprecatedFlags(fs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(used) != len(tc.used) {
				t.Fatalf("deprecated flags %v, want %v", used, tc.used)
			}
			for i := range used {
				if used[i] != tc.used[i] {
					t.Errorf("deprecated flags %v, want %v", used, tc.used)
				}
			}
			c, err := LoadWith(Options{BuiltIn: []byte(minimal), Flags: fs, Environ: noEnv})
			if err != nil {
				t.Fatal(err)
			}
			v, ok := FieldAt(c, tc.key)
			if !ok || v.Interface() != tc.want {
				t.Errorf("%s = %v, want %v", tc.key, v.Interface(), tc.want)
			}
		})
	}
}
