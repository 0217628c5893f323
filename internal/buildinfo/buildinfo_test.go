package buildinfo

import (
	"os"
	"regexp"
	"runtime/debug"
	"testing"
)

func TestFromBuild(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "a8c0d48e1f2a3b4c5d6e7f8091a2b3c4d5e6f708"}, {Key: "vcs.modified", Value: "false"}}
	dirty := []debug.BuildSetting{{Key: "vcs.revision", Value: "a8c0d48e1f2a"}, {Key: "vcs.modified", Value: "true"}}
	tests := []struct {
		main     string
		settings []debug.BuildSetting
		want     string
	}{
		{"v0.2.0", nil, "0.2.0"},
		{"v1.3.0-rc.1", nil, "1.3.0-rc.1"},
		{"(devel)", vcs, Base + "+a8c0d48e1f2a"},
		{"", dirty, Base + "+a8c0d48e1f2a.dirty"},
		{"v0.0.0-20261201083206-a8c0d48e1f2a", vcs, Base + "+a8c0d48e1f2a"},
		{"v0.0.0-20261201083206-a8c0d48e1f2a+dirty", dirty, Base + "+a8c0d48e1f2a.dirty"},
		{"v0.1.1-0.20261201083206-a8c0d48e1f2a", vcs, Base + "+a8c0d48e1f2a"},
		{"(devel)", nil, Base},
	}
	for _, tt := range tests {
		if got := fromBuild(tt.main, tt.settings); got != tt.want {
			t.Errorf("fromBuild(%q) = %q, want %q", tt.main, got, tt.want)
		}
	}
}

// TestVersionIsSemver: whatever the build, the version is semver (without
// the leading v), never a bare pseudo-version.
func TestVersionIsSemver(t *testing.T) {
	semver := regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	if v := Version(); !semver.MatchString(v) || pseudo.MatchString("v"+v) {
		t.Fatalf("Version() = %q, want semver", v)
	}
}

// TestChangelogHasBase: a bump of Base comes with its CHANGELOG.md entry.
func TestChangelogHasBase(t *testing.T) {
	b, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^## ` + regexp.QuoteMeta(Base) + `\b`).Match(b) {
		t.Fatalf("CHANGELOG.md has no \"## %s\" entry", Base)
	}
}
