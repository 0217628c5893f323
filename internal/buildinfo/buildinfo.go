// Package buildinfo reports herdr-link's version.
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// Base is the release this tree is; builds from a VCS checkout add the
// commit.
const Base = "0.1.0"

// version may be set at link time: -ldflags "-X github.com/herdr-link/herdr-link/internal/buildinfo.version=v1.2.3".
var version string

var once sync.Once

// Version returns the build's version: the link-time value, the module
// version when installed with go install, or Base plus the VCS revision.
func Version() string {
	once.Do(func() {
		if version != "" {
			return
		}
		version = Base
		bi, ok := debug.ReadBuildInfo()
		if !ok {
			return
		}
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			version = v
			return
		}
		var rev, dirty string
		for _, s := range bi.Settings {
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
		if rev != "" {
			version = Base + "-dev+" + rev + dirty
		}
	})
	return version
}
