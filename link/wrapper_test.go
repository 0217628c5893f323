package link_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/herdr-link/herdr-link/internal/jsonx"
	"github.com/herdr-link/herdr-link/link"
	"github.com/herdr-link/herdr-link/schema"
	"github.com/herdr-link/herdr-link/socket"
)

func wrapped(t testing.TB, id, from, msg string) (string, link.Envelope) {
	t.Helper()
	e := link.Envelope{Protocol: link.Protocol, ID: id, From: from, To: "reviewer", Message: msg}
	w, err := link.Wrap(e)
	if err != nil {
		t.Fatal(err)
	}
	return w, e
}

// referenceWrapper is the wrapper of the reference implementation (0.2.0
// and later 0.x): prose, a blank line, the envelope as the final line, no
// line break after it.
func referenceWrapper(env string) string {
	return "[herdr-link/1] inter-agent message delivered through the herdr_link gateway.\nFrom: brain\nMessage id: hl_r1_x\n\nThe JSON object below is the complete herdr-link/1 envelope; the text around it is delivery metadata and is not part of the message.\n\n" + env
}

// The ways real hosts merge deliveries into one turn (hosts-and-delivery.md
// §2): every envelope is still found, intact, in order.
func TestExtractMergedTurns(t *testing.T) {
	a, ea := wrapped(t, "hl_a1_aaaa", "brain", "first {\"protocol\":\"herdr-link/1\"} message\nwith lines")
	b, eb := wrapped(t, "hl_b2_bbbb", "writer", "second")
	ref := `{"protocol":"herdr-link/1","id":"hl_r1_x","from":"brain","to":"reviewer","message":"from the reference"}`
	eref := link.Envelope{Protocol: link.Protocol, ID: "hl_r1_x", From: "brain", To: "reviewer", Message: "from the reference"}
	refReply := `{"protocol":"herdr-link/1","id":"hl_r2_y","from":"brain","to":"reviewer","reply_to":"hl_a1_aaaa","message":"0.2.0 reply"}`
	erefReply := link.Envelope{Protocol: link.Protocol, ID: "hl_r2_y", From: "brain", To: "reviewer", ReplyTo: "hl_a1_aaaa", Message: "0.2.0 reply"}
	// The old wrapper of this implementation: envelope last, no breaks around.
	old := strings.TrimSuffix(strings.TrimPrefix(a, "\n"), "\n")
	tests := []struct {
		name string
		text string
		want []link.Envelope
	}{
		{"alone", a, []link.Envelope{ea}},
		{"codex: two glued, no separator", a + b, []link.Envelope{ea, eb}},
		{"codex: old wrappers glued", old + strings.TrimPrefix(old, ""), []link.Envelope{ea, ea}},
		{"envelope glued to the next wrapper's text", old + "[herdr-link/1] Message from agent \"writer\"" + strings.TrimPrefix(b, "\n[herdr-link/1] Message from agent \"writer\""), []link.Envelope{ea, eb}},
		{"opencode: joined by one space, trailing space", old + " " + strings.TrimPrefix(b, "\n") + " ", []link.Envelope{ea, eb}},
		{"pi: glued on one line", strings.TrimSuffix(a, "\n") + strings.TrimPrefix(b, "\n"), []link.Envelope{ea, eb}},
		{"claude: pasted_content tags", `<pasted_content id="1">` + a + `</pasted_content id="1">` + "\n" + `<pasted_content id="2">` + b + `</pasted_content id="2">`, []link.Envelope{ea, eb}},
		{"claude: tags glued to the envelope", `<pasted_content id="1">` + old + `</pasted_content id="1">`, []link.Envelope{ea}},
		{"draft, no separator", "half typed draft" + old, []link.Envelope{ea}},
		{"draft with a brace", "see {this" + old, []link.Envelope{ea}},
		{"draft, blank line", "half typed draft\n\n" + a, []link.Envelope{ea}},
		{"reference 0.x wrapper", referenceWrapper(ref), []link.Envelope{eref}},
		{"reference 0.2.0 reply_to, glued", referenceWrapper(refReply) + a, []link.Envelope{erefReply, ea}},
		{"CRLF", strings.ReplaceAll(a+b, "\n", "\r\n"), []link.Envelope{ea, eb}},
		{"invalid one skipped", strings.Replace(a, `"from":"brain"`, `"from":"BRAIN"`, 1) + b, []link.Envelope{eb}},
		{"inside another JSON object", `{"wrapped":` + ref + `}`, []link.Envelope{eref}},
		{"foreign protocol", `{"protocol":"other/1","id":"hl_x_y","from":"a","to":"b","message":"m"}`, nil},
		{"prose", "nothing here {} [] \"herdr-link/1\"", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := link.ExtractAll(tt.text)
			if len(got) != len(tt.want) {
				t.Fatalf("found %d envelopes %q, want %d in %q", len(got), envelopeIDs(got), len(tt.want), tt.text)
			}
			for i := range got {
				if diff := cmp.Diff(tt.want[i], got[i]); diff != "" {
					t.Errorf("envelope %d mismatch (-want +got):\n%s", i, diff)
				}
			}
			last, ok := link.Extract(tt.text)
			if ok != (len(tt.want) > 0) {
				t.Errorf("Extract found an envelope: %v, want %v", ok, len(tt.want) > 0)
			} else if ok && last != tt.want[len(tt.want)-1] {
				t.Errorf("Extract mismatch (-want +got):\n%s", cmp.Diff(tt.want[len(tt.want)-1], last))
			}
		})
	}
}

// What the reference's receiver does: scan lines bottom-up, take the first
// trimmed line that starts with "{" and parses as an envelope.
func referenceExtract(text string) (map[string]any, bool) {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var v map[string]any
		if json.Unmarshal([]byte(l), &v) == nil && v["protocol"] == link.Protocol {
			return v, true
		}
	}
	return nil, false
}

// Our wrapper keeps the envelope alone on its line, as the reference's
// receiver needs, with or without reply_to.
func TestReferenceReadsOurWrapper(t *testing.T) {
	for _, replyTo := range []string{"", "hl_a1_aaaa"} {
		e := link.Envelope{Protocol: link.Protocol, ID: "hl_b2_bbbb", From: "brain", To: "reviewer", ReplyTo: replyTo, Message: "x\x7f\u009b[31m\u202e"}
		w, _ := link.Wrap(e)
		v, ok := referenceExtract(w)
		if !ok || v["id"] != e.ID || v["message"] != e.Message || v["from"] != "brain" {
			t.Fatalf("reference extraction of %q: %v %v", w, v, ok)
		}
	}
}

func TestEscapedBytes(t *testing.T) {
	e := link.Envelope{Protocol: link.Protocol, ID: "hl_a_b", From: "a", To: "b", Message: "del\x7f c1\u0085\u009b[2J bidi\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069 ls\u2028ps\u2029 esc\x1b[201~ nul\x00 bad\xff ok é 请" +
		" marks\u200e\u200f\u061c zw\u200b\u200c\u200d\u2060\ufeff tags\U000E0000\U000E0041\U000E007F emoji\U0001F600"}
	line, _ := e.Marshal()
	want := `{"protocol":"herdr-link/1","id":"hl_a_b","from":"a","to":"b","message":"del\u007f c1\u0085\u009b[2J bidi\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069 ls\u2028ps\u2029 esc\u001b[201~ nul\u0000 bad\ufffd ok é 请` +
		` marks\u200e\u200f\u061c zw\u200b\u200c\u200d\u2060\ufeff tags\udb40\udc00\udb40\udc41\udb40\udc7f emoji😀"}`
	if string(line) != want {
		t.Fatalf("line\n got %s\nwant %s", line, want)
	}
}

// checkPrintable fails when b holds a byte or rune a terminal would
// interpret.
func checkPrintable(t *testing.T, b []byte) {
	t.Helper()
	if !utf8.Valid(b) {
		t.Fatalf("invalid UTF-8 in %q", b)
	}
	for _, r := range string(b) {
		if link.MustEscape(r) {
			t.Fatalf("raw %U in %q", r, b)
		}
	}
}

func FuzzEnvelopeLine(f *testing.F) {
	f.Add("hello")
	f.Add("\x1b[201~\x7f\u009b\u202e\u2066\xff\xfe")
	f.Add("\u200e\u200f\u061c\u200b\u200d\u2060\ufeff\U000E0001\U000E007F\U0001F600")
	f.Add(strings.Repeat("\x01", 100))
	f.Fuzz(func(t *testing.T, msg string) {
		e := link.Envelope{Protocol: link.Protocol, ID: "hl_a_b", From: "a", To: "b", Message: msg}
		line, err := e.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		checkPrintable(t, line)
		// The line is JSON that decodes to the message (each invalid
		// UTF-8 byte as U+FFFD), with encoding/json as the judge.
		var back link.Envelope
		if err := json.Unmarshal(line, &back); err != nil {
			t.Fatalf("not JSON: %v: %s", err, line)
		}
		if back.Message != string([]rune(msg)) {
			t.Fatalf("message %q came back as %q", msg, back.Message)
		}
		// The whole wrapper is printable but for its own line breaks.
		w, _ := link.Wrap(e)
		checkPrintable(t, []byte(strings.ReplaceAll(w, "\n", "")))
	})
}

// promptLine is the request line the socket client writes for a prompt.
func promptLine(t *testing.T, target, text string) int {
	b, err := jsonx.Marshal(struct {
		ID     string                   `json:"id"`
		Method string                   `json:"method"`
		Params schema.AgentPromptParams `json:"params"`
	}{"herdr-link:18446744073709551615", schema.MethodAgentPrompt, schema.AgentPromptParams{Target: target, Text: text}})
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func TestDeliverableSize(t *testing.T) {
	// 150,000 U+0001: 150 KB of text, over 1 MiB once escaped twice.
	if err := link.CheckDeliverable(strings.Repeat("\x01", 150000), ""); err == nil {
		t.Fatal("150,000 U+0001 accepted")
	}
	if err := link.CheckDeliverable(strings.Repeat("x", link.MaxMessageBytes), "hl_a_b"); err != nil {
		t.Fatalf("256 KiB of ASCII refused: %v", err)
	}
	// 1 MiB / 7 bytes per control character, minus the wrapper: the
	// boundary is found by bisection and holds exactly.
	lo, hi := 0, 200000
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if link.CheckDeliverable(strings.Repeat("\x01", mid), "") == nil {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	e := link.Envelope{Protocol: link.Protocol, ID: "hl_" + strings.Repeat("z", 13) + "_zzzzzzzz", From: strings.Repeat("a", 32), To: strings.Repeat("b", 32), Message: strings.Repeat("\x01", lo)}
	w, _ := link.Wrap(e)
	if n := promptLine(t, strings.Repeat("p", 64), w); n > socket.MaxRequestBytes || n < socket.MaxRequestBytes-8 {
		t.Fatalf("largest deliverable (%d controls) makes a %d-byte line", lo, n)
	}
}

// Whatever a message holds, CheckDeliverable accepts it only if the real
// request line fits 1 MiB, and PromptLineBytes is exact.
func FuzzDeliverable(f *testing.F) {
	f.Add("x", 1000, "")
	f.Add("\x01", 150000, "")
	f.Add("\"\\", 200000, "hl_a_b")
	f.Add("\u009b\u202e", 60000, "")
	f.Fuzz(func(t *testing.T, unit string, n int, replyTo string) {
		if unit == "" || n < 0 || n > 1<<20 || !link.ValidMessageID(replyTo) && replyTo != "" {
			t.Skip()
		}
		msg := strings.Repeat(unit, max(1, n/len(unit)))
		if len(msg) > link.MaxMessageBytes {
			msg = msg[:link.MaxMessageBytes]
		}
		if link.Blank(msg) {
			t.Skip()
		}
		ok := link.CheckDeliverable(msg, replyTo) == nil
		e := link.Envelope{Protocol: link.Protocol, ID: "hl_" + strings.Repeat("z", 13) + "_zzzzzzzz", From: strings.Repeat("a", 32), To: strings.Repeat("b", 32), ReplyTo: replyTo, Message: msg}
		w, _ := link.Wrap(e)
		real := promptLine(t, strings.Repeat("p", 64), w)
		if got := link.PromptLineBytes(w); got != real {
			t.Fatalf("PromptLineBytes = %d, real line %d", got, real)
		}
		if ok != (real <= socket.MaxRequestBytes) {
			t.Fatalf("CheckDeliverable ok=%v for a %d-byte line", ok, real)
		}
	})
}

func FuzzExtractAll(f *testing.F) {
	a, _ := wrapped(f, "hl_a1_aaaa", "brain", "one")
	b, _ := wrapped(f, "hl_b2_bbbb", "writer", "two\n{}")
	f.Add(a+b, 3)
	f.Add(`<pasted_content id="1">`+a+`</pasted_content id="1">`, 0)
	f.Add("draft"+strings.TrimPrefix(a, "\n"), 5)
	f.Add(`{"a":{"b":[{"c":`+a, 1)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		got := link.ExtractAll(s)
		for _, e := range got {
			if e.Validate() != nil {
				t.Fatalf("ExtractAll(%q) took an envelope that fails Validate (%v), want only valid ones", s, e.Validate())
			}
		}
		// Gluing text before and after a wrapper never hides it, and the
		// envelopes of the text around it are still found.
		if cut < 0 {
			cut = -cut
		}
		cut %= len(s) + 1
		glued := s[:cut] + a + s[cut:]
		all := link.ExtractAll(glued)
		found := false
		for _, e := range all {
			if e.ID == "hl_a1_aaaa" && e.Message == "one" {
				found = true
			}
		}
		if !found {
			t.Fatalf("wrapper glued into %q: found %q, want hl_a1_aaaa with \"one\"", s, envelopeIDs(all))
		}
		// A draft glued before a wrapper never hides it.
		pre := link.ExtractAll(s + strings.TrimPrefix(b, "\n"))
		if len(pre) == 0 || pre[len(pre)-1].ID != "hl_b2_bbbb" {
			t.Fatalf("draft %q glued before the wrapper: found %q, want hl_b2_bbbb last", s, envelopeIDs(pre))
		}
	})
}
