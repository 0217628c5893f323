package fakemodel

import (
	"reflect"
	"testing"
)

func TestFillResultID(t *testing.T) {
	send := Result{Text: `{"status":"sent","id":"hl_mx5h18zk_owo0qlix","to":"reviewer"}`}
	tests := []struct {
		name    string
		results []Result
		args    any
		want    any
		wantErr bool
	}{
		{"filled", []Result{send}, map[string]any{"id": "${result.id}", "timeout_s": 50},
			map[string]any{"id": "hl_mx5h18zk_owo0qlix", "timeout_s": 50}, false},
		{"nested and glued", []Result{send}, map[string]any{"arguments": []any{"x ${result.id} y"}},
			map[string]any{"arguments": []any{"x hl_mx5h18zk_owo0qlix y"}}, false},
		{"the last result with an id", []Result{{Text: `{"id":"hl_a_b"}`}, send, {Text: "no id"}},
			"${result.id}", "hl_mx5h18zk_owo0qlix", false},
		{"no placeholder, no result", nil, map[string]any{"to": "reviewer"}, map[string]any{"to": "reviewer"}, false},
		{"placeholder without a result", []Result{{Text: `{"status":"sent"}`}}, "${result.id}", "${result.id}", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fillResultID(tt.args, lastResultID(tt.results))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}
