package ledger

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTTFTBoundaryText: the boundary reads itself as configuration and
// flags write it, writes "content" for the default, and refuses anything
// else with the choices.
func TestTTFTBoundaryText(t *testing.T) {
	for _, c := range []struct {
		in   string
		want TTFTBoundary
		ok   bool
	}{
		{"", TTFTContent, true},
		{"content", TTFTContent, true},
		{"any_token", TTFTAnyToken, true},
		{"reasoning", "", false},
		{"Any_Token", "", false},
	} {
		var b TTFTBoundary
		err := b.UnmarshalText([]byte(c.in))
		if c.ok != (err == nil) || b != c.want || !b.Valid() {
			t.Errorf("%q: %q, %v", c.in, b, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), `want content or any_token, got "`+c.in+`"`)) {
			t.Errorf("%q: error %v", c.in, err)
		}
	}
	for b, want := range map[TTFTBoundary]string{TTFTContent: "content", TTFTAnyToken: "any_token"} {
		if got, _ := b.MarshalText(); string(got) != want {
			t.Errorf("MarshalText(%q) = %q, want %q", b, got, want)
		}
	}
	if TTFTBoundary("bogus").Valid() {
		t.Error("bogus is valid")
	}
}

// TestTTFTBoundaryRecordJSON: a record's JSON is as before the boundary
// wrote itself: the default left out, any_token as written; and it reads
// back to the same boundary.
func TestTTFTBoundaryRecordJSON(t *testing.T) {
	for b, want := range map[TTFTBoundary]string{TTFTContent: "", TTFTAnyToken: `"ttft_boundary":"any_token"`} {
		out, err := json.Marshal(&Record{ID: 1, TTFTBoundary: b})
		if err != nil {
			t.Fatal(err)
		}
		if has := strings.Contains(string(out), "ttft_boundary"); has != (want != "") || !strings.Contains(string(out), want) {
			t.Errorf("%q: %s", b, out)
		}
		var r Record
		if err := json.Unmarshal(out, &r); err != nil || r.TTFTBoundary != b {
			t.Errorf("%q read back as %q (%v)", b, r.TTFTBoundary, err)
		}
	}
}
