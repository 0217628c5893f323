// Package buildinfo reports herdr-link's version.
package buildinfo

import (
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
)

// Base is the release this tree is. It is bumped together with a
// CHANGELOG.md entry; builds from a VCS checkout append the commit.
const Base = "0.2.0"

// version may be set at link time: -ldflags "-X github.com/herdr-link/herdr-link/internal/buildinfo.version=1.2.3".
var version string

// computed is Version's value, worked out once.
var computed = sync.OnceValue(func() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Base
	}
	return fromBuild(bi.Main.Version, bi.Settings)
})

// Version returns the build's version: the link-time value; the module
// version when installed from a tagged release with go install; else Base
// with the VCS revision as semver build metadata ("0.2.0+1a2b3c4d5e6f",
// ".dirty" appended for a modified tree). A pseudo-version that the go
// command stamps on an untagged build is never reported bare.
func Version() string { return computed() }

// pseudo matches Go's pseudo-versions: vX.Y.Z-[pre.]yyyymmddhhmmss-rev.
var pseudo = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+-(?:.*\.)?[0-9]{14}-[0-9a-f]{12}(?:\+dirty)?$`)

func fromBuild(mainVersion string, settings []debug.BuildSetting) string {
	if v := mainVersion; v != "" && v != "(devel)" && !pseudo.MatchString(v) {
		return strings.TrimPrefix(v, "v")
	}
	var rev, dirty string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ".dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return Base
	}
	return Base + "+" + rev + dirty
}
