package sockettest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/herdr-link/herdr-link/socket/sockettest/reqcheck"
)

// FuzzReleaseParse: the second-chance parser of a 0.9 release takes only
// pane.link.resolve requests with their required params, and only lines
// Herdr 0.8.2's parser refused; under 0.8.2 it takes nothing.
func FuzzReleaseParse(f *testing.F) {
	f.Add([]byte(`{"id":"l","method":"pane.link.resolve","params":{"pane_id":"w1:p2","viewport_row":0,"col":3}}`))
	f.Add([]byte(`{"id":"l","method":"pane.link.resolve","params":{"pane_id":"w1:p2"}}`))
	f.Add([]byte(`{"id":"l","method":"pane.link.resolve","params":null}`))
	f.Add([]byte(`{"method":"pane.link.resolve","params":{"pane_id":"a","viewport_row":1,"col":1}}`))
	s09, s082 := NewUnstartedServer(nil), NewUnstartedServer(nil)
	if err := s09.UseHerdr(NewestHerdr); err != nil {
		f.Fatal(err)
	}
	if err := s082.UseHerdr("0.8.2"); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSpace(line)
		req, perr := reqcheck.Parse(line)
		if perr == nil {
			return
		}
		if _, err := s082.releaseParse(line, req, perr); err == nil {
			t.Fatal("0.8.2 took a request its parser refused")
		}
		got, err := s09.releaseParse(line, req, perr)
		if err != nil {
			return
		}
		var p struct {
			PaneID *string `json:"pane_id"`
			Row    *uint16 `json:"viewport_row"`
			Col    *uint16 `json:"col"`
		}
		if got.Method != MethodPaneLinkResolve || json.Unmarshal(got.Params, &p) != nil || p.PaneID == nil || p.Row == nil || p.Col == nil {
			t.Fatalf("0.9 took %q as %s %s, want pane.link_resolve with pane_id, viewport_row and col", line, got.Method, got.Params)
		}
	})
}
