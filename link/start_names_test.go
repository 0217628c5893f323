package link_test

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
)

var messageID = regexp.MustCompile(`hl_[a-z0-9]+_[a-z0-9]+`)

// startAnswers is everything the caller of a start sees, in order: the
// start's answer, then peers and a send to the started agent's name.
func startAnswers(t *testing.T, e env, req link.StartRequest) []string {
	t.Helper()
	l := e.startLink(t, "w1:p1")
	var out []string
	add := func(v any, err error) {
		if err != nil {
			out = append(out, "error: "+err.Error())
			return
		}
		b, _ := jsonx.Marshal(v)
		out = append(out, messageID.ReplaceAllString(string(b), "hl_ID"))
	}
	add(l.Start(t.Context(), req))
	add(l.Peers(t.Context()))
	add(l.Send(t.Context(), link.SendRequest{To: req.Name, Message: "hello", When: link.WhenNow}))
	return out
}

// Names are unique per workspace: a start's answers for a name that an
// agent of another workspace has are exactly those for a name no agent
// has (the new agent gets an alias in Herdr that no model-facing text
// shows), for every kind of start; only a name of the caller's own
// workspace is taken. The message then reaches the started agent, not
// the other workspace's.
func TestStartNameOutsideWorkspace(t *testing.T) {
	for _, req := range []link.StartRequest{
		{Name: "ops", Kind: "claude"},
		{Name: "ops", Kind: "codex", Placement: link.PlaceTab},
		{Name: "ops", Kind: "pi", Placement: link.PlaceDown, Message: "first task"},
		{Name: "ops", Kind: "claude", Beside: "reviewer"},
		{Name: "ops", Kind: "nosuchkind"},
		{Name: "ops", Agent: "missing"},
	} {
		t.Run(req.Kind+req.Agent+"/"+req.Placement, func(t *testing.T) {
			elsewhere := setup(t) // w2 has an agent named ops
			nowhere := setup(t)
			someone := "someone"
			if _, err := nowhere.srv.Client().AgentRename(t.Context(), "w2:p1", &someone); err != nil {
				t.Fatal(err)
			}
			got, want := startAnswers(t, elsewhere, req), startAnswers(t, nowhere, req)
			if !slices.Equal(got, want) {
				t.Errorf("answers for a name of another workspace:\n%s\nwant (a free name's):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for _, a := range got {
				privateIn(t, elsewhere.w, a)
			}
			if !strings.HasPrefix(got[0], `{"status":"started"`) {
				return
			}
			if subs := elsewhere.w.Submissions("w2:p1"); len(subs) != 0 {
				t.Errorf("the other workspace's ops got %d turns", len(subs))
			}
		})
	}
}

// A name of the caller's own workspace is taken (nothing is created);
// names a start cannot alias are refused as input, wherever they live.
func TestStartNameTakenInWorkspace(t *testing.T) {
	e := setup(t)
	l := e.startLink(t, "w1:p1")
	panes := len(e.w.PaneIDs())
	for _, tc := range []struct {
		name string
		want error
	}{
		{"reviewer", link.ErrStartNameTaken},
		{"brain", link.ErrStartNameTaken},
		{"ops__1a2b", link.ErrStartInputInvalid},
		{"a__b", link.ErrStartInputInvalid},
		{strings.Repeat("x", link.MaxStartName+1), link.ErrStartInputInvalid},
	} {
		if _, err := l.Start(t.Context(), link.StartRequest{Name: tc.name, Kind: "claude"}); !errors.Is(err, tc.want) {
			t.Errorf("start %q: %v, want %v", tc.name, err, tc.want)
		}
	}
	if got := len(e.w.PaneIDs()); got != panes {
		t.Errorf("panes %d → %d", panes, got)
	}
}

func TestDisplayName(t *testing.T) {
	for _, tc := range []struct{ herdr, want string }{
		{"ops", "ops"},
		{"ops__1a2b", "ops"},
		{"ops__1A2B", "ops__1A2B"},
		{"ops__1a2", "ops__1a2"},
		{"ops_1a2b", "ops_1a2b"},
		{"a__b__1a2b", "a__b__1a2b"},
		{"__1a2b", "__1a2b"},
		{"x__1a2bc", "x__1a2bc"},
		{"hl-0a1b2c3d", "hl-0a1b2c3d"},
	} {
		if got := link.DisplayName(tc.herdr); got != tc.want {
			t.Errorf("DisplayName(%q) = %q, want %q", tc.herdr, got, tc.want)
		}
	}
}

func FuzzDisplayName(f *testing.F) {
	f.Add("ops__1a2b")
	f.Add("reviewer")
	f.Fuzz(func(t *testing.T, s string) {
		d := link.DisplayName(s)
		if d != s && (!link.ValidStartName(d) || !link.ValidName(s) || !strings.HasPrefix(s, d+"__")) {
			t.Fatalf("DisplayName(%q) = %q", s, d)
		}
		if link.ValidStartName(s) && d != s {
			t.Fatalf("a start name %q is shown as %q", s, d)
		}
	})
}
