package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// TestFleetBehindAuth: a fleet whose admin servers serve TLS and require
// basic auth (admin.web_config_file) forms and runs its ladder when each
// shard has the peers' credentials and CA (fleet.basic_auth,
// fleet.tls_config): every shard's share of every step arrives and the
// steps are valid. The fleet endpoints stay behind the web configuration:
// without credentials they answer 401.
func TestFleetBehindAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a fleet of in-process daemons over loopback HTTP on the fleet ladder's real timetable (synctest cannot hold real sockets)")
	}
	dir := t.TempDir()
	certFile, keyFile, pool := testutil.SelfSigned(t, dir, x509.ExtKeyUsageServerAuth)
	hash, err := bcrypt.GenerateFromPassword([]byte("fleet-pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(dir, "web.yml")
	pw := filepath.Join(dir, "password")
	for p, body := range map[string]string{
		web: fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  fleet: %s\n", certFile, keyFile, hash),
		pw:  "fleet-pw\n",
	} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, url := startFleetSim(t, nil)
	tlsClient := func(auth bool) *http.Client {
		var rt http.RoundTripper = &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{RootCAs: pool}}
		if auth {
			rt = testutil.BasicAuth{User: "fleet", Password: "fleet-pw", Next: rt}
		}
		return &http.Client{Timeout: 10 * time.Second, Transport: rt}
	}
	f := startTestFleetClient(t, 2, func(shard int, addrs []string) string {
		y := fleetYAML(shard, addrs, "", fleetTarget(url, ladderYAML("[6, 12]", "")))
		y = strings.Replace(y, `admin: {listen: "127.0.0.1:0"}`, fmt.Sprintf(`admin: {listen: "127.0.0.1:0", web_config_file: %q}`, web), 1)
		y = strings.ReplaceAll(y, `"http://`, `"https://`)
		return strings.Replace(y, "fleet: {", fmt.Sprintf("fleet: {basic_auth: {username: fleet, password_file: %q}, tls_config: {ca_file: %q}, ", pw, certFile), 1)
	}, func() *http.Client { return tlsClient(true) })

	res := f.waitFleetLadder("sim", time.Time{}, 60*time.Second)
	var rows []string
	for _, s := range res.ShardSteps {
		rows = append(rows, fmt.Sprintf("step %d shard %d: planned %d, ok %d, valid %v, missing %q", s.Step, s.Shard, s.Planned, s.OK, s.Valid, s.Missing))
	}
	t.Logf("fleet ladder behind TLS and basic auth: capacity %g (%s)\n  %s", res.Capacity, res.CapacityBound, strings.Join(rows, "\n  "))
	for _, s := range res.ShardSteps {
		if s.Missing != "" || !shareValidOrHost(s) || s.Planned == 0 {
			t.Errorf("step %d, shard %d: missing %q, valid %v %v, planned %d: want every share present and valid (or invalid for its host)",
				s.Step, s.Shard, s.Missing, s.Valid, s.InvalidCauses, s.Planned)
		}
	}
	// A step invalid for a busy host stops the ladder (on_generator_invalid):
	// then not every step ran.
	if !validOrHost(t, "fleet behind auth", res.Result) && (len(res.Steps) != 2 || len(res.ShardSteps) != 4) {
		t.Fatalf("%d steps, %d shard shares: want 2 steps of 2 shards", len(res.Steps), len(res.ShardSteps))
	}
	resp, err := tlsClient(false).Get(f.shards[1].admin + fleet.PathShard)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET %s without credentials: %d, want 401", fleet.PathShard, resp.StatusCode)
	}
}
