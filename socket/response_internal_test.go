package socket

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/google/go-cmp/cmp"
	"reflect"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
)

// decodeBoth decodes line on the one-buffer path and on the streaming
// path, the latter bounded by max.
func decodeBoth(line []byte, max int) (fast, streamed jsonx.RawMessage, ferr, serr error) {
	c := &Client{}
	ferr = decodeResponse("m", "x", line, false, &fast)
	in := append(append([]byte(nil), line...), '\n')
	_, serr = c.decodeStream(context.Background(), "m", "x", &lineReader{r: bytes.NewReader(in), left: max}, &streamed)
	return
}

func TestDecodeStreamAgreesWithOneBuffer(t *testing.T) {
	big := `{"type":"agent_list","agents":[` + strings.Repeat(`{"name":"a","pane_id":"w1:p1"},`, 1000) + `{}]}`
	tests := []struct {
		line string
		ok   bool
	}{
		{`{"id":"x","result":{"type":"ok"}}`, true},
		{`{"result":{"type":"ok"},"id":"x","extra":[1,2,{"a":null}]}`, true},
		{`{"id":"x","result":` + big + `}`, true},
		{`{"id":"x","error":{"code":"agent_not_found","message":"no"}}`, false},
		{`{"id":"y","result":{"type":"ok"}}`, false},
		{`{"id":"x"}`, false},
		{`{"id":"x","result":[1]}`, false},
		{`{"id":"x","result":{"type":"ok"}} trailing`, false},
		{`{"id":"x","result":{"type":"ok"`, false},
		{`[]`, false},
	}
	for _, tt := range tests {
		fast, streamed, ferr, serr := decodeBoth([]byte(tt.line), 1<<20)
		if (ferr == nil) != tt.ok || (serr == nil) != tt.ok {
			t.Errorf("%.60s: one buffer %v, stream %v", tt.line, ferr, serr)
			continue
		}
		if tt.ok && !bytes.Equal(compact(fast), compact(streamed)) {
			t.Errorf("%.60s: results differ", tt.line)
		}
		if !tt.ok && ferr != nil && serr != nil {
			var fe, se *Error
			if errors.As(ferr, &fe) != errors.As(serr, &se) {
				t.Errorf("%.60s: classified differently: %v vs %v", tt.line, ferr, serr)
			}
		}
	}
	// Past the bound: too large, whatever follows.
	line := []byte(`{"id":"x","result":` + big + `}`)
	if _, _, _, err := decodeBoth(line, len(line)-1); !errors.Is(err, ErrResponseTooLarge) {
		t.Fatalf("over the bound: %v", err)
	}
	if _, _, _, err := decodeBoth(line, len(line)); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

// The streaming decoder never panics or hangs, and agrees with the
// one-buffer decoder whenever both accept a line.
func FuzzDecodeStream(f *testing.F) {
	f.Add([]byte(`{"id":"x","result":{"type":"ok"}}`))
	f.Add([]byte(`{"id":"x","error":{"code":"c","message":"m"}}`))
	f.Add([]byte(`{"id":"x","result":{"agents":[{"name":"a"}]}} `))
	f.Add([]byte(`{"id":"x","result":{"a":"\n"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return // one line only
		}
		fast, streamed, ferr, serr := decodeBoth(line, 1<<16)
		if ferr == nil && serr == nil && !bytes.Equal(compact(fast), compact(streamed)) {
			t.Fatalf("results differ: %s vs %s", fast, streamed)
		}
	})
}

// A typed result streamed (its lists element by element) is the one the
// one-buffer decode gives, tag included; a nested list (a snapshot's
// panes) and null members too.
func TestStreamTypedAgreesWithOneBuffer(t *testing.T) {
	agents := strings.Repeat(`{"name":"a","pane_id":"w1:p1","agent_status":"idle","workspace_id":"w1"},`, 500) + `{"pane_id":"w1:p9"}`
	type agent struct {
		Name   *string `json:"name"`
		PaneID string  `json:"pane_id"`
		Status string  `json:"agent_status"`
	}
	type list struct {
		Type   string  `json:"type"`
		Agents []agent `json:"agents"`
	}
	type snapshot struct {
		Type     string `json:"type"`
		Snapshot struct {
			Panes []agent  `json:"panes"`
			Tabs  []string `json:"tabs"`
			Focus *agent   `json:"focused"`
		} `json:"snapshot"`
	}
	tests := []struct {
		name, line string
		into       func() any
		tag        string
	}{
		{"list", `{"id":"x","result":{"type":"agent_list","agents":[` + agents + `]}}`, func() any { return new(list) }, "agent_list"},
		{"type last", `{"id":"x","result":{"agents":[` + agents + `],"type":"agent_list","extra":{"k":[1]}}}`, func() any { return new(list) }, "agent_list"},
		{"nested", `{"id":"x","result":{"type":"session_snapshot","snapshot":{"panes":[` + agents + `],"tabs":null,"focused":{"pane_id":"w1:p1"}}}}`, func() any { return new(snapshot) }, "session_snapshot"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fast, streamed := tt.into(), tt.into()
			if err := decodeResponse("m", "x", []byte(tt.line), false, fast); err != nil {
				t.Fatal(err)
			}
			c := &Client{}
			in := []byte(tt.line + "\n")
			tag, err := c.decodeStream(t.Context(), "m", "x", &lineReader{r: bytes.NewReader(in), left: len(in)}, streamed)
			if err != nil {
				t.Fatal(err)
			}
			if tag != tt.tag || resultTag("x", []byte(tt.line)) != tt.tag {
				t.Errorf("tags: streamed %q, from the line %q; want %q", tag, resultTag("x", []byte(tt.line)), tt.tag)
			}
			if !reflect.DeepEqual(streamed, fast) {
				t.Errorf("streamed result mismatch (-want +got):\n%s", cmp.Diff(fast, streamed))
			}
		})
	}
}
