package fakemodel

import (
	"reflect"
	"strings"
	"testing"
)

func TestEnvelopes(t *testing.T) {
	a := `{"protocol":"herdr-link/1","id":"hl_1","from":"a","to":"b","message":"x"}`
	b := `{"protocol":"herdr-link/1","id":"hl_2","from":"b","to":"a","reply_to":"hl_1","message":"y } {"}`
	tests := []struct {
		text string
		ids  []string
	}{
		{"", nil},
		{"prose\n" + a, []string{"hl_1"}},
		{"draft" + a + b + " trailing", []string{"hl_1", "hl_2"}},
		{`{"protocol":"herdr-link/1","id":""}`, nil},
		{`{"protocol":"other/1","id":"x"}`, nil},
		{`{"protocol":"herdr-link/1","id":"hl_3"`, nil},
	}
	for _, tt := range tests {
		var ids []string
		for _, e := range Envelopes(tt.text) {
			ids = append(ids, e.ID)
		}
		if !reflect.DeepEqual(ids, tt.ids) {
			t.Errorf("Envelopes(%q) = %v, want %v", tt.text, ids, tt.ids)
		}
	}
}

func TestParseScript(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{`{"steps":[{"call":"herdr_link"},{"text":"done"}]}`, ""},
		{`{"steps":[{}]}`, "needs call or text"},
		{`{"steps":[{"call":"a","text":"b"}]}`, "both"},
		{`{"steps":[{"text":"b","args":{}}]}`, "no args"},
		{`{"steps":[],"extra":1}`, "unknown field"},
		{`{"steps":[]} {}`, "trailing"},
		{`[`, "script"},
	}
	for _, tt := range tests {
		_, err := ParseScript([]byte(tt.in))
		if (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("ParseScript(%s) error %v, want %q", tt.in, err, tt.wantErr)
		}
	}
}
