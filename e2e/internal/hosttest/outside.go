package hosttest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/herdr-link/herdr-link/e2e/internal/fakemodel"
)

// outsideMarker begins herdr-link's explanation of an empty tool list
// (the initialize instructions outside Herdr, PROTOCOL.md §8.3).
const outsideMarker = "Herdr Link offers no tools here"

// paneEnv is the HERDR_* environment of pane; none outside Herdr (srv nil).
func paneEnv(srv *Sim, pane string) []string {
	if srv == nil {
		return nil
	}
	return srv.Env(pane)
}

// checkOutside runs one more session of the mode with no HERDR_* at all
// (an agent started outside Herdr, or Codex without env_vars) and a model
// that only answers, and records whether herdr-link's reason for the empty
// tool list reached a model request. A mode with Outside set fails when it
// did not.
func (r *Result) checkOutside(ctx context.Context, h *Host, m Mode, cfg Config) {
	tag := fmt.Sprintf("%s-%s-outside-%d", h.Name, m.Name, time.Now().UnixNano()%1e6)
	sr := runSession(ctx, h, m, cfg, nil, "outside", "", tag, "Is Herdr Link available here?",
		fakemodel.Script{Steps: []fakemodel.Step{{Text: "No."}}})
	if sr.Err != "" {
		r.failf("outside: %s; stderr: %s", sr.Err, lastLines(sr.Outcome.Stderr, 5))
		return
	}
	r.OutsideShown = "no"
	for _, q := range sr.Requests {
		if len(q.LinkTools) > 0 {
			r.failf("outside: the model saw herdr-link tools %v outside Herdr", q.LinkTools)
		}
	}
	// The raw requests, as runSession kept them.
	bodies, _ := filepath.Glob(filepath.Join(cfg.Root, h.Name+"-"+m.Name, "outside", "bodies", "*.json"))
	for _, f := range bodies {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(outsideMarker)) {
			r.OutsideShown = "yes"
		}
	}
	if m.Outside && r.OutsideShown != "yes" {
		r.failf("outside: herdr-link's reason for the empty tool list (%q…) never reached the model", outsideMarker)
	}
}
