package recording_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonshape"
	"github.com/herdr-link/herdr-link/internal/recording"
)

func TestWriteParse(t *testing.T) {
	ex := []recording.Exchange{
		{Request: []byte(`{"id":"a","method":"ping","params":{}}`), Responses: [][]byte{[]byte(`{"id":"a","result":{"type":"pong"}}`)}},
		{Request: []byte(`{"id":"b","method":"events.subscribe","params":{}}`), Responses: [][]byte{[]byte(`{"x":1}`), []byte(`{"y":2}`)}},
		{Request: []byte(`{"id":"c","method":"pane.get"}`)},
	}
	var b bytes.Buffer
	if err := recording.Write(&b, []string{"two\nlines"}, ex); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), recording.Header+"\n# two\n# lines\n> ") {
		t.Fatalf("written:\n%s", b.String())
	}
	got, err := recording.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("parsed %d exchanges, want 3", len(got))
	}
	if len(got[1].Responses) != 2 {
		t.Fatalf("the second exchange has %d responses, want 2", len(got[1].Responses))
	}
	if got[0].Method() != "ping" || string(got[1].Responses[1]) != `{"y":2}` {
		t.Fatalf("parsed first method %q, second's last response %s; want ping, {\"y\":2}", got[0].Method(), got[1].Responses[1])
	}
	for _, bad := range []string{"", "not a recording\n", recording.Header + "\n< {}\n", recording.Header + "\n? x\n"} {
		if _, err := recording.Parse(strings.NewReader(bad)); err == nil && bad != "" {
			t.Errorf("parsed %q", bad)
		}
	}
	if err := recording.Write(&b, nil, []recording.Exchange{{Request: []byte("a\nb")}}); err == nil {
		t.Error("wrote a line break")
	}
}

func TestRedact(t *testing.T) {
	ex := []recording.Exchange{
		{Request: []byte(`{"id":"probe:agent.get","method":"agent.get","params":{"target":"wA:p2"}}`),
			Responses: [][]byte{[]byte(`{"id":"probe:agent.get","result":{"type":"agent_info","agent":{"terminal_id":"term_63a1f2b4c5d601","name":"reviewer","agent":"codex","terminal_title":"✳ secret plan","agent_status":"idle","agent_session":{"source":"herdr:codex","agent":"codex","kind":"id","value":"ses_42"},"workspace_id":"wA","tab_id":"wA:t3","pane_id":"wA:p2","focused":false,"state_change_seq":7,"cwd":"/home/alice/acme","revision":3}}}`)}},
		{Request: []byte(`{"id":"probe:missing","method":"agent.get","params":{"target":"reviewer"}}`),
			Responses: [][]byte{[]byte(`{"id":"probe:missing","error":{"code":"agent_target_ambiguous","message":"agent target reviewer is ambiguous; candidates: terminal_id=term_63a1f2b4c5d601 pane_id=wA:p2 workspace_id=wA tab_id=wA:t3 cwd=/home/alice/acme status=Idle"}}`)}},
		{Request: []byte(`{"id":"s","method":"session.snapshot","params":{}}`),
			Responses: [][]byte{[]byte(`{"id":"s","result":{"type":"session_snapshot","snapshot":{"version":"0.8.2","protocol":20,"workspaces":[{"workspace_id":"wA","number":1,"label":"acme","tab_count":1}],"tabs":[{"tab_id":"wA:t3","label":"1"}]}}}`)}},
	}
	out, err := recording.Redact(ex)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for i, e := range out {
		all.Write(e.Request)
		for j, r := range e.Responses {
			all.Write(r)
			// Shape unchanged.
			d, err := jsonshape.Lines(ex[i].Responses[j], r)
			if err != nil || len(d) > 0 {
				t.Errorf("redaction changed the shape: %v %v", d, err)
			}
		}
	}
	s := all.String()
	for _, secret := range []string{"wA", "term_63a1", "reviewer", "secret plan", "ses_42", "/home/alice", "acme", ":t3"} {
		if strings.Contains(s, secret) {
			t.Errorf("redacted recording holds %q:\n%s", secret, s)
		}
	}
	for _, kept := range []string{`"id":"probe:agent.get"`, `"agent":"codex"`, `"source":"herdr:codex"`, `"version":"0.8.2"`, `"code":"agent_target_ambiguous"`,
		`"target":"w1:p1"`, `"pane_id":"w1:p1"`, `"tab_id":"w1:t1"`, `"workspace_id":"w1"`, `"name":"agent-1"`, `"label":"1"`,
		`"message":"message-1"`} {
		if !strings.Contains(s, kept) {
			t.Errorf("redacted recording lacks %s:\n%s", kept, s)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(recording.Header + "\n> {}\n< {}\n# c\n\n"))
	f.Add([]byte(recording.Header + "\r\n> x\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ex, err := recording.Parse(bytes.NewReader(b))
		if err != nil {
			return
		}
		var w bytes.Buffer
		if err := recording.Write(&w, nil, ex); err != nil {
			return // a parsed line may hold a lone \r
		}
		again, err := recording.Parse(&w)
		if err != nil || len(again) != len(ex) {
			t.Fatalf("round trip: %v, %d vs %d exchanges", err, len(again), len(ex))
		}
	})
}
