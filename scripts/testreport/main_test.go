package main

import (
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantFailed bool
		want       []string
	}{
		{
			name: "a skip names its reason",
			in: `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: skipping: ../shared is not beside the repository\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Elapsed":0.5}`,
			want: []string{"ok  \tp\t0.500s", "1 tests skipped:", "  p TestA: skipping: ../shared is not beside the repository"},
		},
		{
			name: "a failure prints its output",
			in: `{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: got 1, want 2\n"}
{"Action":"fail","Package":"p","Test":"TestB"}
{"Action":"fail","Package":"p","Elapsed":0.1}`,
			wantFailed: true,
			want:       []string{"--- FAIL: TestB (p)", "got 1, want 2"},
		},
		{
			name:       "a build error passes through",
			in:         "# p\n./x.go:1:1: syntax error\n" + `{"Action":"fail","Package":"p","Elapsed":0}`,
			wantFailed: true,
			want:       []string{"./x.go:1:1: syntax error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			failed, err := report(strings.NewReader(tt.in), &out)
			if err != nil {
				t.Fatal(err)
			}
			if failed != tt.wantFailed {
				t.Errorf("failed = %v, want %v", failed, tt.wantFailed)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q; got:\n%s", w, out.String())
				}
			}
		})
	}
}
