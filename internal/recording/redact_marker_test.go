package recording_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonshape"
	"github.com/herdr-link/herdr-link/internal/recording"
)

// recordedLines are real Herdr lines (../shared/herdr-recorded, beside the
// repository) and this package's own examples.
func recordedLines(t testing.TB) [][]byte {
	lines := [][]byte{
		[]byte(`{"id":"probe:agent.get","method":"agent.get","params":{"target":"wA:p2"}}`),
		[]byte(`{"id":"probe:events.subscribe","method":"events.subscribe","params":{"subscriptions":[{"type":"pane.updated"},{"type":"pane.agent_status_changed","pane_id":"w1:p1"}]}}`),
		[]byte(`{"id":"probe:agent.get","result":{"type":"agent_info","agent":{"terminal_id":"term_63a1f2b4c5d601","name":"reviewer","agent":"codex","terminal_title":"✳ secret plan","agent_status":"idle","state_labels":{"busy":"Working on it"},"tokens":{"ctx":"12k"},"agent_session":{"source":"herdr:codex","agent":"codex","kind":"id","value":"ses_42"},"workspace_id":"wA","tab_id":"wA:t3","pane_id":"wA:p2","focused":false,"state_change_seq":7,"cwd":"/home/alice/acme","revision":3}}}`),
		[]byte(`{"id":"probe:missing","error":{"code":"agent_target_ambiguous","message":"agent target reviewer is ambiguous; candidates: terminal_id=term_63a1f2b4c5d601 pane_id=wA:p2"}}`),
		[]byte(`{"event":"pane.agent_status_changed","data":{"agent":"claude","agent_status":"idle","display_agent":"claude","pane_id":"w1:p1","workspace_id":"w1","state_labels":{"idle":"Ready"},"title":"x"}}`),
		[]byte(`{"id":"probe:ping","result":{"type":"pong","version":"0.8.2","protocol":20,"capabilities":{"live_handoff":true,"detached_server_daemon":true}}}`),
	}
	dir := filepath.Join("..", "..", "..", "shared", "herdr-recorded")
	for _, name := range []string{"errors.ndjson", "events-mixed.ndjson", "pong.json", "snapshot.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Logf("no recorded Herdr lines: %v", err)
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
				lines = append(lines, append([]byte(nil), l...))
			}
		}
	}
	return lines
}

// positions counts the plantable positions of n: every string, every
// object key, every number, boolean and null.
func positions(n *jsonshape.Node) int {
	switch n.Kind {
	case jsonshape.Object:
		c := len(n.Keys)
		for _, v := range n.Vals {
			c += positions(v)
		}
		return c
	case jsonshape.Array:
		c := 0
		for _, v := range n.Items {
			c += positions(v)
		}
		return c
	}
	return 1
}

// plant replaces position at (in positions' order) with marker: a key
// becomes the marker, a value the marker string, or (with embed) the
// marker inside the string it was.
func plant(n *jsonshape.Node, at *int, marker string, embed bool) bool {
	switch n.Kind {
	case jsonshape.Object:
		for i := range n.Keys {
			if *at == 0 {
				n.Keys[i] = marker
				return true
			}
			*at--
			if plant(n.Vals[i], at, marker, embed) {
				return true
			}
		}
		return false
	case jsonshape.Array:
		for _, v := range n.Items {
			if plant(v, at, marker, embed) {
				return true
			}
		}
		return false
	}
	if *at > 0 {
		*at--
		return false
	}
	if embed && n.Kind == jsonshape.String {
		n.Text = n.Text + " " + marker
	} else {
		n.Kind, n.Text = jsonshape.String, marker
	}
	return true
}

// isString reports whether position at of n is a string value.
func isString(n *jsonshape.Node, at int) bool {
	var found *jsonshape.Node
	var find func(n *jsonshape.Node)
	find = func(n *jsonshape.Node) {
		switch n.Kind {
		case jsonshape.Object:
			for _, v := range n.Vals {
				if at == 0 || found != nil {
					return // a key
				}
				at--
				find(v)
			}
		case jsonshape.Array:
			for _, v := range n.Items {
				if found != nil {
					return
				}
				find(v)
			}
		default:
			if at == 0 && found == nil {
				found = n
			}
			at--
		}
	}
	find(n)
	return found != nil && found.Kind == jsonshape.String
}

// redactOne redacts line as a response (or, for a line with a method, as
// a request) and returns what the recording would hold.
func redactOne(t testing.TB, line []byte) string {
	e := recording.Exchange{Request: []byte(`{"id":"probe:x","method":"ping","params":{}}`), Responses: [][]byte{line}}
	if bytes.Contains(line, []byte(`"method"`)) {
		e = recording.Exchange{Request: line}
	}
	out, err := recording.Redact([]recording.Exchange{e})
	if err != nil {
		t.Fatalf("Redact(%s): %v", line, err)
	}
	return string(out[0].Request) + "\n" + string(bytes.Join(out[0].Responses, []byte("\n")))
}

// No free text survives redaction: a marker planted in any position of a
// real line (a key, a string, in place of a number, a boolean or null, or
// inside a string Herdr's schema keeps) is never in the recording.
func TestRedactLeavesNoMarker(t *testing.T) {
	const marker = "zqxmarker"
	planted := 0
	for _, line := range recordedLines(t) {
		n, err := jsonshape.Parse(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		for at := range positions(n) {
			for _, embed := range []bool{false, true} {
				m, _ := jsonshape.Parse(line)
				i := at
				if embed && !isString(m, at) {
					continue // only a string can hold the marker inside it
				}
				if !plant(m, &i, marker, embed) {
					t.Fatalf("position %d of %s not found", at, line)
				}
				planted++
				if got := redactOne(t, m.Marshal()); strings.Contains(strings.ToLower(got), marker) {
					t.Errorf("a marker survived at position %d (embedded %v) of\n%s\nin\n%s", at, embed, m.Marshal(), got)
				}
			}
		}
	}
	t.Logf("%d planted markers, none survived", planted)
}

// Numbers survive only where Herdr's schema has a counter or a size; a
// number anywhere else (a map's value, an unknown key, in place of a
// string, a process id, a time) becomes 0.
func TestRedactNumbers(t *testing.T) {
	const big = "987654321"
	tests := []struct {
		line string
		kept bool
	}{
		{`{"id":"probe:a","result":{"type":"agent_info","agent":{"terminal_id":"t","agent_status":"idle","workspace_id":"w1","tab_id":"w1:t1","pane_id":"w1:p1","focused":false,"revision":` + big + `}}}`, true},
		{`{"id":"probe:a","result":{"type":"agent_info","agent":{"terminal_id":"t","agent_status":"idle","workspace_id":"w1","tab_id":"w1:t1","pane_id":"w1:p1","focused":false,"revision":1,"secret":` + big + `}}}`, false},
		{`{"id":"probe:a","result":{"type":"agent_info","agent":{"terminal_id":"t","agent_status":"idle","workspace_id":"w1","tab_id":"w1:t1","pane_id":` + big + `,"focused":false,"revision":1}}}`, false},
		{`{"id":"probe:a","result":{"type":"agent_info","agent":{"terminal_id":"t","agent_status":"idle","workspace_id":"w1","tab_id":"w1:t1","pane_id":"w1:p1","focused":false,"revision":1,"state_labels":{"a":` + big + `}}}}`, false},
		{`{"id":"probe:a","result":{"type":"pong","version":"0.8.2","protocol":` + big + `}}`, true},
	}
	for i, tt := range tests {
		got := redactOne(t, []byte(tt.line))
		if strings.Contains(got, big) != tt.kept {
			t.Errorf("%d: kept %v, want %v:\n%s", i, !tt.kept, tt.kept, got)
		}
	}
}

// FuzzRedact: Redact takes any JSON line without failing, keeps its
// shape where the schema knows it, and a marker planted anywhere in it
// never survives.
func FuzzRedact(f *testing.F) {
	for _, l := range recordedLines(f) {
		f.Add(l, uint16(0))
	}
	f.Fuzz(func(t *testing.T, line []byte, where uint16) {
		n, err := jsonshape.Parse(line)
		if err != nil {
			return
		}
		const marker = "zqxmarker"
		if strings.Contains(strings.ToLower(string(line)), marker) {
			return
		}
		total := positions(n)
		if total == 0 {
			return
		}
		at := int(where) % total
		if !plant(n, &at, marker+strconv.Itoa(total), where&1 == 1) {
			t.Fatalf("no position %d", where)
		}
		if got := redactOne(t, n.Marshal()); strings.Contains(strings.ToLower(got), marker) {
			t.Fatalf("a marker survived in\n%s\nas\n%s", n.Marshal(), got)
		}
	})
}
