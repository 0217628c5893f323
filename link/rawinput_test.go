package link_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/herdr-link/herdr-link/link"
)

// startsPrintable reports whether text's first byte is not a C0 control
// or DEL: a TUI that reads raw keystrokes (Ink) takes a chunk that starts
// with one for a control key.
func startsPrintable(text string) bool {
	return text != "" && text[0] >= 0x20 && text[0] != 0x7f
}

func TestTypedText(t *testing.T) {
	wrapped, err := link.Wrap(link.Envelope{Protocol: link.Protocol, ID: "hl_abc_12345678", From: "brain", To: "reviewer", Message: "line one\nline two"})
	if err != nil {
		t.Fatal(err)
	}
	notice := "\n[herdr-link/1] Notice from Herdr Link: a test\n"
	tests := []struct {
		kind, text string
		want       string
	}{
		{"grok", wrapped, strings.TrimPrefix(wrapped, "\n")},
		{"grok", notice, strings.TrimPrefix(notice, "\n")},
		{"grok", "\r\n\t\x7f[x]\n", "[x]\n"},
		{"grok", "plain\n", "plain\n"},
		{"claude", wrapped, wrapped},
		{"gemini", wrapped, wrapped},
		{"", wrapped, wrapped},
		{"kimi", notice, notice},
	}
	for _, tt := range tests {
		got := link.TypedText(tt.kind, tt.text)
		if got != tt.want {
			t.Errorf("TypedText(%q, %q) = %q, want %q", tt.kind, tt.text, got, tt.want)
		}
		if link.TakesRawInput(tt.kind) && !startsPrintable(got) {
			t.Errorf("TypedText(%q, %q) starts with a control character", tt.kind, tt.text)
		}
	}
}

// TestSendIntoRawTUI: what Send types into a target whose TUI takes input
// raw starts with printable text (a leading line break would be a control
// key, and Grok CLI drops the whole chunk), and the envelope is still
// found on its own line; other kinds get the wrapper as it is.
func TestSendIntoRawTUI(t *testing.T) {
	tests := []struct {
		kind          string
		wantLeadingNL bool
	}{
		{"grok", false},
		{"claude", true},
		{"codex", true},
		{"kimi", true},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake(tt.kind, "idle")
				f.script = after(300*time.Millisecond, "working")
				l := mustLink(t, link.Config{Herdr: f, PaneID: "w1:p1", Delivery: link.DeliveryConfirm, Locker: newLocker()})
				res, err := l.Send(t.Context(), link.SendRequest{To: "reviewer", Message: "please\nreview", When: link.WhenNow})
				if err != nil {
					t.Fatal(err)
				}
				if len(f.texts) != 1 {
					t.Fatalf("%d prompts, want 1", len(f.texts))
				}
				text := f.texts[0]
				if got := strings.HasPrefix(text, "\n"); got != tt.wantLeadingNL {
					t.Fatalf("typed text starts with a line break: %v, want %v (%q)", got, tt.wantLeadingNL, text[:min(len(text), 40)])
				}
				if !tt.wantLeadingNL && !startsPrintable(text) {
					t.Fatalf("typed text starts with a control character: %q", text[:min(len(text), 40)])
				}
				all := link.ExtractAll("half typed draft" + text)
				if len(all) != 1 || all[0].ID != res.ID || all[0].Message != "please\nreview" {
					t.Fatalf("extracted %q from %q, want the envelope %s with \"please\\nreview\"", envelopeIDs(all), text, res.ID)
				}
				lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
				if last := lines[len(lines)-1]; !strings.HasPrefix(last, `{"protocol":"herdr-link/1"`) {
					t.Fatalf("the envelope is not a line of its own: %q", last)
				}
				time.Sleep(link.SubmitHold + time.Millisecond)
				synctest.Wait()
			})
		})
	}
}
