package start

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/herdr-link/herdr-link/link/proto"
)

// check checks a request without any round trip and resolves its
// configured agent and working directory.
func (l *Launcher) check(req Request) (startPlan, error) {
	p := startPlan{Request: req}
	switch {
	case !proto.ValidStartName(req.Name):
		return p, newErr(proto.StartInputInvalid, detailStartName, nil)
	case (req.Kind == "") == (req.Agent == ""):
		return p, newErr(proto.StartInputInvalid, detailStartWhat, nil)
	case req.Agent != "" && req.Args != nil:
		return p, newErr(proto.StartInputInvalid, detailStartWhat, nil)
	case req.Kind != "" && !validKind(req.Kind):
		return p, newErr(proto.StartInputInvalid, detailStartKind, nil)
	case req.Placement != "" && req.Placement != PlaceRight && req.Placement != PlaceDown && req.Placement != PlaceTab:
		return p, newErr(proto.StartInputInvalid, detailStartPlacement, nil)
	case req.Beside != "" && (req.Placement == PlaceTab || !proto.ValidName(req.Beside)):
		return p, newErr(proto.StartInputInvalid, detailStartPlacement, nil)
	case checkArgs(req.Args) != nil:
		return p, newErr(proto.StartInputInvalid, detailStartArgs, nil)
	}
	if req.Message != "" {
		if err := l.cfg.Ports.Undeliverable(req.Message); err != nil {
			return p, err
		}
	}
	dir, home, err := l.dirs()
	if err != nil {
		return p, newErr(proto.StartInputInvalid, detailStartCwd, err)
	}
	if p.dir, err = resolveCwd(dir, home, req.Cwd); err != nil {
		return p, newErr(proto.StartInputInvalid, detailStartCwd, err)
	}
	if req.Agent != "" {
		c, err := loadConfigured(dir, home, req.Agent, l.nextVariant)
		if err != nil {
			return p, err
		}
		p.Kind, p.Args = c.Kind, c.Args
		if p.Placement == "" && p.Beside == "" {
			p.Placement = c.Placement
		}
	}
	if p.Placement == "" {
		p.Placement = PlaceRight
	}
	return p, nil
}

// dirs returns the caller's working directory and the user's home, both
// with symbolic links resolved ("" for a home that cannot be found).
func (l *Launcher) dirs() (string, string, error) {
	dir := l.cfg.Dir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return "", "", err
		}
	}
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", "", err
	}
	home := l.cfg.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" {
		if h, err := filepath.EvalSymlinks(home); err == nil {
			home = h
		} else {
			home = ""
		}
	}
	return dir, home, nil
}

var errCwdBounds = errors.New("outside the working directory and the home directory")

// resolveCwd resolves a start's cwd against the caller's directory: it
// must be an existing directory inside dir or inside home (never the
// filesystem root), after symbolic links. Empty is dir itself.
func resolveCwd(dir, home, cwd string) (string, error) {
	if cwd == "" {
		return dir, nil
	}
	if !utf8.ValidString(cwd) || hasControl(cwd) || len(cwd) > 4096 {
		return "", errors.New("malformed path")
	}
	if !filepath.IsAbs(cwd) {
		cwd = filepath.Join(dir, cwd)
	}
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", errors.New("not a directory")
	}
	if within(real, dir) || home != "" && home != string(filepath.Separator) && within(real, home) {
		return real, nil
	}
	return "", errCwdBounds
}

func within(p, root string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// validKind reports whether s looks like an agent kind: 1 to 32 lowercase
// letters, digits, '-' or '_'. Herdr decides whether it knows it.
func validKind(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// checkArgs bounds an argv tail: at most MaxArgs strings of at most
// MaxArgBytes each, MaxArgsSum in all, valid UTF-8 without NUL
// or other control characters.
func checkArgs(args []string) error {
	if len(args) > MaxArgs {
		return errors.New("too many args")
	}
	sum := 0
	for _, a := range args {
		sum += len(a)
		if len(a) > MaxArgBytes || !utf8.ValidString(a) || hasControl(a) {
			return errors.New("malformed arg")
		}
	}
	if sum > MaxArgsSum {
		return errors.New("args too large")
	}
	return nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return true
		}
	}
	return false
}

// nextVariant is the round robin of configured variants: per file and
// agent key, per Launcher.
func (l *Launcher) nextVariant(key string, n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.variants == nil {
		l.variants = map[string]int{}
	}
	i := l.variants[key] % n
	l.variants[key] = i + 1
	return i
}
