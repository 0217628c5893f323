// Package hosttest runs real agent hosts (Claude Code, Codex, OpenCode, …)
// headless against herdr-link built from the tree, a scripted fake model
// (internal/fakemodel) and the Herdr simulator (socket/sockettest), and
// reports what each host showed the model.
//
// A host is one Host value registered from its own file (claude.go,
// codex.go, opencode.go): its npm packages, its binary, its modes and a
// Command function that writes the host's isolated configuration for one
// session and returns the command to run. Install puts pinned versions
// into a cache folder; Run drives the messaging scenario for one host and
// mode (scenario.go); the report (report.go) is the table the README's
// host section is backed by.
//
// The end-to-end test (TestHosts) only runs when HERDR_LINK_HOSTS names
// the cache folder; scripts/hosts.sh sets it up.
package hosttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Host is one agent host the runner can drive.
type Host struct {
	// Name is the short id used in test names and the report ("claude").
	Name string
	// Display is the host's product name ("Claude Code").
	Display string
	// Version is the pinned version of the first package.
	Version string
	// Packages are npm specs installed together (the host first).
	Packages []string
	// Bin is the executable under node_modules/.bin.
	Bin string
	// Kind is the Herdr agent kind of the host's panes ("claude").
	Kind string
	// Modes are the configurations to run; every one is a subtest.
	Modes []Mode
	// Command writes the session's configuration (under s.Home and
	// s.Work) and returns the headless command for s.Prompt. The runner
	// adds the environment, working directory, output files and process
	// group; entries of the returned cmd.Env come last and so win (e.g. a
	// PATH with the host's own Node first).
	Command func(s *Session) (*exec.Cmd, error)
	// Env adds host-wide environment variables (after the base ones).
	Env func(s *Session) []string
	// Interactive, when set, makes the runner drive the host's TUI in a
	// PTY instead of a headless command.
	Interactive *Interactive
}

// Mode is one configuration of a host.
type Mode struct {
	Name string
	// Env and Args are added to every session of the mode.
	Env  []string
	Args []string
	// ListChanged says whether the host is expected to show the Tier-1
	// tools after activation (at once, late or via its tool search).
	ListChanged bool
	// Note is a one-line description for the report.
	Note string
	// Outside says the host shows the model herdr-link's initialize
	// instructions, so that outside Herdr the model learns why there are
	// no tools (checked by one more session without HERDR_*).
	Outside bool
	// Reviewer, when set, runs the reviewer's session on another host
	// ("claude" or "claude/direct"), so the run proves the two hosts'
	// agents exchange messages.
	Reviewer string
}

var registry []*Host

// Register adds a host; each host file calls it from init.
func Register(h *Host) {
	if h.Name == "" || h.Command == nil || len(h.Packages) == 0 || h.Bin == "" || len(h.Modes) == 0 {
		panic("hosttest: incomplete host " + h.Name)
	}
	for _, o := range registry {
		if o.Name == h.Name {
			panic("hosttest: host registered twice: " + h.Name)
		}
	}
	registry = append(registry, h)
	sort.SliceStable(registry, func(i, j int) bool { return registry[i].Name < registry[j].Name })
}

// Hosts returns the registered hosts, by name.
func Hosts() []*Host { return slices.Clone(registry) }

// Lookup returns a registered host.
func Lookup(name string) *Host {
	for _, h := range registry {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// Dir is the host's install folder under the cache.
func (h *Host) Dir(cache string) string {
	return filepath.Join(cache, h.Name+"-"+h.Version)
}

// BinPath is the host's executable in the cache.
func (h *Host) BinPath(cache string) string {
	return filepath.Join(h.Dir(cache), "node_modules", ".bin", h.Bin)
}

const installedMarker = ".herdr-link-installed"

// Installed reports whether the cache holds the host's pinned packages.
func (h *Host) Installed(cache string) bool {
	b, err := os.ReadFile(filepath.Join(h.Dir(cache), installedMarker))
	if err != nil || strings.TrimSpace(string(b)) != strings.Join(h.Packages, " ") {
		return false
	}
	_, err = os.Stat(h.BinPath(cache))
	return err == nil
}

// Install puts the host's pinned packages into the cache with npm, unless
// they are there already. A failure says which package could not be
// installed and npm's last lines.
func (h *Host) Install(ctx context.Context, cache string) error {
	if h.Installed(cache) {
		return nil
	}
	dir := h.Dir(cache)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// A package.json of its own keeps npm from climbing to a parent project.
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"herdr-link-host-`+h.Name+`","private":true}`+"\n"), 0o644); err != nil {
		return err
	}
	args := append([]string{"install", "--no-audit", "--no-fund", "--save-exact", "--prefix", dir}, h.Packages...)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s cannot be installed: npm install %s: %v\n%s", h.Display, h.Version, strings.Join(h.Packages, " "), err, lastLines(string(out), 15))
	}
	if _, err := os.Stat(h.BinPath(cache)); err != nil {
		return fmt.Errorf("%s %s: npm installed %s but %s is missing: %v", h.Display, h.Version, strings.Join(h.Packages, " "), h.BinPath(cache), err)
	}
	return os.WriteFile(filepath.Join(dir, installedMarker), []byte(strings.Join(h.Packages, " ")+"\n"), 0o644)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Session is one headless run of a host in one pane.
type Session struct {
	Host *Host
	Mode Mode
	// Name is the session's label ("sender", "reviewer", "closer").
	Name string
	// Dir is the session's own folder; Home (HOME) and Work (the working
	// directory) are inside it.
	Dir, Home, Work string
	// HostBin is the host's executable, LinkBin herdr-link's.
	HostBin, LinkBin string
	// HostDir is the host's install folder (its node_modules are inside).
	HostDir string
	// Repo is the module's root.
	Repo string
	// ModelURL is the fake model's base URL (no /v1).
	ModelURL string
	// PaneEnv are the HERDR_* variables of the pane the session runs in.
	PaneEnv []string
	Prompt  string
	// Marker is an environment variable (NAME=VALUE) set on every process
	// of the session, so strays (daemons) can be found and stopped.
	Marker string
	// ToolTimeout, when set, is written into the host's MCP tool-call
	// timeout setting where it has one (Codex tool_timeout_sec, Claude
	// Code MCP_TOOL_TIMEOUT); zero leaves the host's default.
	ToolTimeout time.Duration
	// Done is the script's last text: an interactive session ends once
	// its screen shows it.
	Done string
}

// Lookup returns the value of a variable in PaneEnv.
func (s *Session) PaneVar(name string) string {
	for _, kv := range s.PaneEnv {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// Outcome is how a session's process ended.
type Outcome struct {
	Err      error
	Duration time.Duration
	Stdout   string
	Stderr   string
	// Strays are processes of the session still running after it ended
	// (they were killed).
	Strays int
}

// run executes a session's command with a deadline, in its own process
// group, and kills everything it left behind.
func run(ctx context.Context, s *Session, timeout time.Duration) Outcome {
	cmd, err := s.Host.Command(s)
	if err != nil {
		return Outcome{Err: fmt.Errorf("configure %s: %w", s.Host.Name, err)}
	}
	cmd.Env = sessionEnv(s, cmd)
	if cmd.Dir == "" {
		cmd.Dir = s.Work
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, "tmp"), 0o755); err != nil {
		return Outcome{Err: err}
	}
	if s.Host.Interactive != nil {
		return runInteractive(ctx, s, cmd, timeout)
	}
	stdout, err := os.Create(filepath.Join(s.Dir, "stdout.txt"))
	if err != nil {
		return Outcome{Err: err}
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(s.Dir, "stderr.txt"))
	if err != nil {
		return Outcome{Err: err}
	}
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	ownGroup(cmd)
	cmd.WaitDelay = 3 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Outcome{Err: fmt.Errorf("start %s: %w", cmd.Path, err)}
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var o Outcome
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			err = fmt.Errorf("%s exited: %w", s.Host.Bin, err)
		}
		o.Err = err
	case <-timer.C:
		killGroup(pgid)
		<-done
		o.Err = fmt.Errorf("%s did not finish within %s", s.Host.Bin, timeout)
	case <-ctx.Done():
		killGroup(pgid)
		<-done
		o.Err = ctx.Err()
	}
	o.Duration = time.Since(start)
	killGroup(pgid)
	o.Strays = killMarked(s.Marker)
	out, _ := os.ReadFile(stdout.Name())
	errb, _ := os.ReadFile(stderr.Name())
	o.Stdout, o.Stderr = string(out), string(errb)
	return o
}

// sessionEnv is a session's environment: the base variables, the pane's
// HERDR_* ones, the host's, the mode's, then cmd's own (which win).
func sessionEnv(s *Session, cmd *exec.Cmd) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + s.Home,
		"USER=hosttest",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"XDG_CONFIG_HOME=" + filepath.Join(s.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(s.Home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(s.Home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(s.Home, ".local", "state"),
		"TMPDIR=" + filepath.Join(s.Dir, "tmp"),
		s.Marker,
	}
	env = append(env, s.PaneEnv...)
	if s.Host.Env != nil {
		env = append(env, s.Host.Env(s)...)
	}
	env = append(env, s.Mode.Env...)
	env = append(env, cmd.Env...)
	return env
}

// killMarked kills every process of this user whose environment holds
// marker (NAME=VALUE), e.g. a daemon a host detached from its group. It
// returns how many it found.
func killMarked(marker string) int {
	if marker == "" {
		return 0
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	n := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if slices.Contains(strings.Split(string(b), "\x00"), marker) {
			if killPID(pid) == nil {
				n++
			}
		}
	}
	return n
}

// LinkConfig is what `herdr-link config HOST` prints for the session's
// herdr-link: the runner registers herdr-link with exactly the snippet a
// user copies.
func (s *Session) LinkConfig(host string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, s.LinkBin, "config", host).Output()
	if err != nil {
		return "", fmt.Errorf("herdr-link config %s: %w", host, err)
	}
	return string(out), nil
}
