package link_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
)

// A Herdr without a method herdr-link needs: the model reads one fixed
// sentence (no ids, no Herdr text); the operator log says what is missing.
func TestHerdrLacksMethod(t *testing.T) {
	for _, missing := range []string{schema.MethodAgentPrompt, schema.MethodPaneClose, schema.MethodAgentList} {
		t.Run(missing, func(t *testing.T) {
			e := setup(t)
			e.srv.SetMissing(missing)
			var logs bytes.Buffer
			l := e.link("w1:p1")
			l = relink(t, l, func(c *link.Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
			var err error
			switch missing {
			case schema.MethodAgentPrompt:
				_, err = l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "hi"})
			case schema.MethodPaneClose:
				_, err = l.Close(t.Context(), "reviewer")
			default:
				_, err = l.Peers(t.Context())
			}
			want := "NOT_IN_HERDR: this Herdr version lacks a feature herdr-link needs; upgrade Herdr"
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v, want %q", err, want)
			}
			for _, id := range e.w.IDs() {
				if strings.Contains(err.Error(), id) {
					t.Fatalf("model-facing text holds id %s", id)
				}
			}
			if !strings.Contains(logs.String(), "herdr lacks a method herdr-link needs") || !strings.Contains(logs.String(), missing) {
				t.Fatalf("operator log: %s", logs.String())
			}
		})
	}
}
