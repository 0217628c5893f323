package link_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/herdr-link/herdr-link/link"
)

func TestContractMatchesProtocolMD(t *testing.T) {
	doc, err := os.ReadFile("../PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```contract\n(.*?)\n```").FindAllSubmatch(doc, -1)
	if len(blocks) != 1 {
		t.Fatalf("PROTOCOL.md has %d contract blocks, want 1", len(blocks))
	}
	if string(blocks[0][1]) != link.Contract {
		t.Fatalf("link.Contract differs from PROTOCOL.md's contract block:\n--- PROTOCOL.md\n%s\n--- link.Contract\n%s", blocks[0][1], link.Contract)
	}
}

func TestValidName(t *testing.T) {
	for s, ok := range map[string]bool{
		"a": true, "reviewer-one": true, "reviewer_2": true, strings.Repeat("a", 32): true, "hl-0a1b2c3d": true,
		"": false, "with space": false, "Reviewer": false, "1reviewer": false, "reviewer.one": false,
		strings.Repeat("a", 33): false, "w1:p1": false, "-x": false, "é": false,
	} {
		if link.ValidName(s) != ok {
			t.Errorf("ValidName(%q) != %v", s, ok)
		}
	}
}

func TestMessageID(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := link.NewMessageID(now)
		if !link.ValidMessageID(id) || !regexp.MustCompile(`^hl_[0-9a-z]+_[0-9a-z]{8}$`).MatchString(id) {
			t.Fatalf("bad id %q", id)
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
	}
	for s, ok := range map[string]bool{
		"hl_mep7abc_4f8k2n": true, "hl_a_b": true, "hl__b": false, "hl_a_": false, "hl_A_b": false,
		"hx_a_b": false, "hl_a_b_c": false, "hl_a": false, "hl_a-b_c": false, "hl_" + strings.Repeat("a", 130) + "_b": false,
	} {
		if link.ValidMessageID(s) != ok {
			t.Errorf("ValidMessageID(%q) != %v", s, ok)
		}
	}
}

func TestEnvelopeWire(t *testing.T) {
	e := link.Envelope{Protocol: link.Protocol, ID: "hl_mep7def_9q3r5s", From: "reviewer", To: "brain", ReplyTo: "hl_mep7abc_4f8k2n", Message: "done <ok> & \"quoted\"\n\x1b[201~"}
	b, err := e.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"protocol":"herdr-link/1","id":"hl_mep7def_9q3r5s","from":"reviewer","to":"brain","reply_to":"hl_mep7abc_4f8k2n","message":"done <ok> & \"quoted\"\n\u001b[201~"}`
	if string(b) != want {
		t.Fatalf("wire form\n got %s\nwant %s", b, want)
	}
	e.ReplyTo = ""
	b, _ = e.Marshal()
	if strings.Contains(string(b), "reply_to") {
		t.Fatalf("empty reply_to written: %s", b)
	}
	// The reference's example decodes and validates.
	var ref link.Envelope
	if err := json.Unmarshal([]byte(`{"protocol":"herdr-link/1","id":"hl_mep7abc_4f8k2n","from":"brain","to":"reviewer","message":"请检查这个设计。"}`), &ref); err != nil || ref.Validate() != nil {
		t.Fatalf("reference envelope: %v %v", err, ref.Validate())
	}
}

func TestValidate(t *testing.T) {
	ok := link.Envelope{Protocol: link.Protocol, ID: "hl_a_b", From: "a", To: "b", Message: "x"}
	tests := []struct {
		name string
		mut  func(*link.Envelope)
		ok   bool
	}{
		{"valid", func(*link.Envelope) {}, true},
		{"other protocol", func(e *link.Envelope) { e.Protocol = "herdr-link/2" }, false},
		{"bad id", func(e *link.Envelope) { e.ID = "x" }, false},
		{"bad from", func(e *link.Envelope) { e.From = "A" }, false},
		{"bad to", func(e *link.Envelope) { e.To = "" }, false},
		{"bad reply_to", func(e *link.Envelope) { e.ReplyTo = "nope" }, false},
		{"blank", func(e *link.Envelope) { e.Message = " \n\t " }, false},
		{"too big", func(e *link.Envelope) { e.Message = strings.Repeat("x", link.MaxMessageBytes+1) }, false},
		{"max size", func(e *link.Envelope) { e.Message = strings.Repeat("x", link.MaxMessageBytes) }, true},
	}
	for _, tt := range tests {
		e := ok
		tt.mut(&e)
		if (e.Validate() == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v", tt.name, e.Validate())
		}
	}
}

func TestWrapAndExtract(t *testing.T) {
	e := link.Envelope{Protocol: link.Protocol, ID: "hl_a1_b2", From: "brain", To: "reviewer", Message: "line 1\nline 2\n{\"protocol\":\"herdr-link/1\"}"}
	text, err := link.Wrap(e)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text, "\n")
	last, _ := e.Marshal()
	// The wrapper begins and ends on lines of its own: a line break
	// first, the envelope verbatim as its last line, a line break after.
	if lines[0] != "" || lines[len(lines)-1] != "" || lines[len(lines)-2] != string(last) || !strings.HasPrefix(lines[1], "[herdr-link/1] ") {
		t.Fatalf("wrapper lines %q", lines)
	}
	if strings.Contains(text, "last line") {
		t.Fatalf("the wrapper still claims the envelope is the last line:\n%s", text)
	}
	if !strings.Contains(text, `"brain"`) || !strings.Contains(text, "reply_to \"hl_a1_b2\"") || !strings.Contains(text, "herdr_link") {
		t.Fatalf("wrapper does not say how to reply:\n%s", text)
	}
	tests := []struct {
		name, text string
		want       string // id, "" for none
	}{
		{"wrapper", text, "hl_a1_b2"},
		{"terminal noise after it", text + "\n\n> \n", "hl_a1_b2"},
		{"last valid wins", text + "\n" + strings.Replace(string(last), "hl_a1_b2", "hl_a1_b3", 1), "hl_a1_b3"},
		{"a later invalid one is skipped", text + "\n" + strings.Replace(string(last), "brain", "BRAIN", 1), "hl_a1_b2"},
		{"foreign protocol ignored", text + "\n" + `{"protocol":"other/1","id":"hl_x_y","from":"a","to":"b","message":"m"}`, "hl_a1_b2"},
		{"prose only", "hello\nworld", ""},
		{"empty", "", ""},
		{"CRLF", strings.ReplaceAll(text, "\n", "\r\n"), "hl_a1_b2"},
	}
	for _, tt := range tests {
		got, ok := link.Extract(tt.text)
		if (tt.want == "") == ok || (ok && got.ID != tt.want) {
			t.Errorf("%s: Extract = id %q, %v; want id %q", tt.name, got.ID, ok, tt.want)
		}
	}
	// The message survives the trip, newlines and all.
	got, _ := link.Extract(text)
	if diff := cmp.Diff(e, got); diff != "" {
		t.Fatalf("round trip mismatch (-want +got):\n%s", diff)
	}
}

func FuzzExtract(f *testing.F) {
	e := link.Envelope{Protocol: link.Protocol, ID: "hl_a_b", From: "a", To: "b", Message: "m"}
	text, _ := link.Wrap(e)
	f.Add(text)
	f.Add("{}\n{\"protocol\":\"herdr-link/1\"}")
	f.Add("\n\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := link.Extract(s)
		if ok && got.Validate() != nil {
			t.Fatalf("Extract(%q) took an envelope that fails Validate (%v), want no envelope", s, got.Validate())
		}
		if ok {
			// What was extracted wraps and extracts to itself.
			w, err := link.Wrap(got)
			if err != nil {
				t.Fatal(err)
			}
			back, ok := link.Extract(w)
			if !ok {
				t.Fatalf("Extract(Wrap(%q)) found no envelope", s)
			}
			if diff := cmp.Diff(got, back); diff != "" {
				t.Fatalf("re-extract mismatch (-first +again):\n%s", diff)
			}
		}
	})
}
