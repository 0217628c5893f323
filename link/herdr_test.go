package link_test

import (
	"strconv"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
)

// TestAgentOptionalFields: completion_seq and agent_session are read when
// Herdr sends them and absent when it does not.
func TestAgentOptionalFields(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		comp       uint64
		hasComp    bool
		session    string
	}{
		{"0.8.2: neither", `{"pane_id":"w1:p1","state_change_seq":3}`, 0, false, ""},
		{"null", `{"completion_seq":null}`, 0, false, ""},
		{"zero is present", `{"completion_seq":0}`, 0, true, ""},
		{"a count", `{"completion_seq":18446744073709551615}`, 1<<64 - 1, true, ""},
		{"a session", `{"agent_session":{"source":"herdr:claude","agent":"claude","kind":"id","value":"abc"}}`, 0, false, "abc"},
	} {
		var a link.Agent
		if err := jsonx.Unmarshal([]byte(tc.json), &a); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		comp, has := a.CompletionSeq.Get()
		session := ""
		if a.Session != nil {
			session = a.Session.Value
		}
		if comp != tc.comp || has != tc.hasComp || session != tc.session {
			t.Errorf("%s: completion %d %v, session %q; want %d %v, %q", tc.name, comp, has, session, tc.comp, tc.hasComp, tc.session)
		}
	}
	for _, bad := range []string{`{"completion_seq":-1}`, `{"completion_seq":"3"}`, `{"completion_seq":1.5}`} {
		var a link.Agent
		if err := jsonx.Unmarshal([]byte(bad), &a); err == nil {
			t.Errorf("%s: accepted as %v", bad, a.CompletionSeq)
		}
	}
}

// FuzzOptionalSeq: any input is a number read back exactly, absent, or an
// error; never a panic.
func FuzzOptionalSeq(f *testing.F) {
	for _, s := range []string{"0", "null", "42", "18446744073709551616", "-1", `"x"`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var o link.OptionalSeq
		if err := o.UnmarshalJSON([]byte(s)); err != nil {
			return
		}
		v, ok := o.Get()
		if !ok {
			if s != "null" {
				t.Fatalf("%q: absent without error", s)
			}
			return
		}
		if got := strconv.FormatUint(v, 10); got != s {
			t.Fatalf("%q read as %s", s, got)
		}
		out, err := o.MarshalJSON()
		if err != nil || string(out) != s {
			t.Fatalf("%q written back as %q, %v", s, out, err)
		}
	})
}
