//go:build unix

package ptypane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"

	"github.com/herdr-link/herdr-link/socket/sockettest/program"
)

// Limits of a pane.
const (
	// MaxQueued bounds the input waiting for the program to read it, like
	// the capacity of Herdr's PTY input channel: a write that would pass it
	// fails (agent.prompt answers agent_prompt_failed).
	MaxQueued = 8 << 20
	// OutputKeep is how much of the program's most recent raw output
	// Output returns.
	OutputKeep = 1 << 20
	// Scrollback is the number of lines kept above the screen.
	Scrollback = 2000
	// KillGrace is how long Close waits after SIGHUP before SIGKILL.
	KillGrace = 2 * time.Second
	// DrainGrace bounds how long Exited waits, once the program has
	// exited, for the pane to have read all it wrote: the reader sees the
	// end of the output when the last holder of the terminal closes it,
	// which a process that left the group may never do.
	DrainGrace = 5 * time.Second
)

// ErrQueueFull is Send's error when the program is not reading its input
// fast enough.
var ErrQueueFull = errors.New("no available capacity")

// ErrExited is Send's error once the program has exited.
var ErrExited = errors.New("the pane's program has exited")

// Pane is a program running in a pseudo-terminal, with a terminal
// emulator (github.com/charmbracelet/x/vt) keeping its screen and
// answering its queries (device attributes, cursor position), and a
// tracker of the input modes Herdr types by. It implements
// [program.Program].
type Pane struct {
	cmd  *exec.Cmd
	ptmx *os.File
	pgid int

	mu      sync.Mutex // guards emu, modes, out, outGen
	emu     *vt.Emulator
	modes   termModes
	osc     oscFilter // what the emulator reads (see oscFilter)
	out     []byte    // the most recent raw output, at most OutputKeep
	outGen  uint64    // bumped on every output chunk
	outCond *sync.Cond

	inMu     sync.Mutex
	inCond   *sync.Cond
	inQ      [][]byte
	inBytes  int
	inClosed bool

	exited  chan struct{}
	exitErr error
	readEnd chan struct{} // the output reader has returned

	closeOnce sync.Once
	closeErr  error
	wg        sync.WaitGroup // reader, writer, responder
}

var _ program.Program = (*Pane)(nil)

// Start runs spec in a new pseudo-terminal of spec's size (50×200 by
// default) with exactly the environment env. argv[0] is looked up in
// env's PATH when it has no slash. The program is a session leader with
// the terminal as its controlling terminal, so Close can end its whole
// process group.
func Start(spec program.Spec, env []string) (program.Program, error) {
	p, err := StartPane(spec, env)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// StartPane is [Start] returning the concrete pane.
func StartPane(spec program.Spec, env []string) (*Pane, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, errors.New("ptypane: empty argv")
	}
	rows, cols := spec.Rows, spec.Cols
	if rows == 0 {
		rows = program.DefaultRows
	}
	if cols == 0 {
		cols = program.DefaultCols
	}
	path, err := lookPath(spec.Argv[0], env)
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{Path: path, Args: spec.Argv, Env: env, Dir: spec.Dir}
	ptmx, err := pty.StartWithAttrs(cmd, &pty.Winsize{Rows: rows, Cols: cols},
		&syscall.SysProcAttr{Setsid: true, Setctty: true})
	if err != nil {
		return nil, fmt.Errorf("ptypane: start %s: %w", spec.Argv[0], err)
	}
	ptmx = pollable(ptmx)
	p := &Pane{cmd: cmd, ptmx: ptmx, pgid: cmd.Process.Pid, emu: vt.NewEmulator(int(cols), int(rows)),
		exited: make(chan struct{}), readEnd: make(chan struct{})}
	p.emu.SetScrollbackSize(Scrollback)
	p.answerKittyQuery()
	p.outCond = sync.NewCond(&p.mu)
	p.inCond = sync.NewCond(&p.inMu)
	p.wg.Add(3)
	go p.readOutput()
	go p.writeInput()
	go p.respond()
	go func() {
		p.exitErr = cmd.Wait()
		// What the program wrote last may still be in the terminal, not yet
		// on the screen: Exited means both.
		drain := time.NewTimer(DrainGrace)
		select {
		case <-p.readEnd:
		case <-drain.C:
		}
		drain.Stop()
		close(p.exited)
		p.mu.Lock()
		p.outCond.Broadcast()
		p.mu.Unlock()
	}()
	return p, nil
}

// pollable returns f's descriptor in non-blocking mode, so that reads go
// through Go's poller and Close interrupts a read in progress (a blocking
// read would outlive Close while anything else holds the terminal open).
// Where the poller cannot take it, f is returned as it was.
func pollable(f *os.File) *os.File {
	sc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	nfd := -1
	_ = sc.Control(func(fd uintptr) { nfd, err = syscall.Dup(int(fd)) })
	if err != nil || nfd < 0 {
		return f
	}
	if err := syscall.SetNonblock(nfd, true); err != nil {
		syscall.Close(nfd)
		return f
	}
	syscall.CloseOnExec(nfd)
	f.Close()
	return os.NewFile(uintptr(nfd), "/dev/ptmx")
}

// lookPath finds file in env's PATH (not the simulator's own), as execvp
// in the pane would.
func lookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	dirs := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			dirs = v
		}
	}
	for _, dir := range strings.Split(dirs, ":") {
		if dir == "" {
			dir = "."
		}
		cand := dir + "/" + file
		if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return cand, nil
		}
	}
	return "", fmt.Errorf("ptypane: %s: not found in the pane's PATH", file)
}

// readOutput feeds the program's output to the mode tracker and the
// emulator until the terminal closes.
func (p *Pane) readOutput() {
	defer p.wg.Done()
	defer close(p.readEnd)
	buf := make([]byte, 32<<10)
	for {
		n, err := p.ptmx.Read(buf)
		if n > 0 {
			p.mu.Lock()
			chunk := buf[:n]
			p.modes.Write(chunk)
			p.out = append(p.out, chunk...)
			_, _ = p.emu.Write(p.osc.filter(chunk))
			if len(p.out) > OutputKeep {
				p.out = append(p.out[:0], p.out[len(p.out)-OutputKeep:]...)
			}
			p.outGen++
			p.outCond.Broadcast()
			p.mu.Unlock()
		}
		if err != nil {
			p.mu.Lock()
			p.outCond.Broadcast()
			p.mu.Unlock()
			return
		}
	}
}

// answerKittyQuery makes the emulator answer the kitty keyboard
// protocol's query (CSI ? u) with the flags in effect (CSI ? flags u), as
// the terminal of a Herdr pane (libghostty-vt) does. Programs detect the
// protocol that way: they send the query and then a primary device
// attributes request, and take the protocol as supported when its answer
// comes first. The answer goes through the emulator's reply pipe, so it
// keeps its place before the attributes reply. The flags are the mode
// tracker's, which has already seen the chunk being parsed: a chunk that
// queries before it changes the flags (no program does that) would get
// the later flags.
func (p *Pane) answerKittyQuery() {
	p.emu.RegisterCsiHandler(ansi.Command('?', 0, 'u'), func(ansi.Params) bool {
		_, _ = fmt.Fprintf(p.emu.InputPipe(), "\x1b[?%du", p.modes.KittyFlags())
		return true
	})
}

// respond forwards the emulator's answers (to device attribute and
// cursor position queries) to the program's input.
func (p *Pane) respond() {
	defer p.wg.Done()
	buf := make([]byte, 4096)
	for {
		n, err := p.emu.Read(buf)
		if n > 0 {
			_ = p.enqueue(append([]byte(nil), buf[:n]...), false)
		}
		if err != nil {
			return
		}
	}
}

// writeInput writes queued input to the terminal, in order.
func (p *Pane) writeInput() {
	defer p.wg.Done()
	for {
		p.inMu.Lock()
		for len(p.inQ) == 0 && !p.inClosed {
			p.inCond.Wait()
		}
		if p.inClosed {
			p.inMu.Unlock()
			return
		}
		b := p.inQ[0]
		p.inQ = p.inQ[1:]
		p.inMu.Unlock()
		_, err := p.ptmx.Write(b)
		p.inMu.Lock()
		p.inBytes -= len(b)
		p.inMu.Unlock()
		if err != nil {
			p.inMu.Lock()
			p.inClosed = true
			p.inQ = nil
			p.inMu.Unlock()
			return
		}
	}
}

func (p *Pane) enqueue(b []byte, bounded bool) error {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.inClosed {
		return ErrExited
	}
	if bounded && p.inBytes+len(b) > MaxQueued {
		return ErrQueueFull
	}
	p.inQ = append(p.inQ, b)
	p.inBytes += len(b)
	p.inCond.Signal()
	return nil
}

// Send queues b for the program's input. It never blocks; it fails when
// the program has exited or is too far behind reading.
func (p *Pane) Send(b []byte) error {
	select {
	case <-p.exited:
		return ErrExited
	default:
	}
	return p.enqueue(append([]byte(nil), b...), true)
}

// Accepts reports whether Send would take n bytes now.
func (p *Pane) Accepts(n int) error {
	select {
	case <-p.exited:
		return ErrExited
	default:
	}
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if p.inClosed {
		return ErrExited
	}
	if p.inBytes+n > MaxQueued {
		return ErrQueueFull
	}
	return nil
}

// BracketedPaste reports whether the program has bracketed paste on.
func (p *Pane) BracketedPaste() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.modes.Bracketed()
}

// Enter is Enter in the terminal's current key encoding.
func (p *Pane) Enter() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.modes.Enter()
}

// KittyFlags is the kitty keyboard protocol flags the program set (0: the
// legacy encoding).
func (p *Pane) KittyFlags() uint32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.modes.KittyFlags()
}

// Screen is the emulator's text: the visible screen (trailing spaces and
// blank lines trimmed), or with recent the scrollback lines above it
// too; ansi renders styles as escape sequences.
func (p *Pane) Screen(recent, ansi bool) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	if recent {
		if sb := p.emu.Scrollback(); sb != nil {
			for _, l := range sb.Lines() {
				if ansi {
					b.WriteString(l.Render())
				} else {
					b.WriteString(strings.TrimRight(l.String(), " "))
				}
				b.WriteByte('\n')
			}
		}
	}
	if ansi {
		b.WriteString(p.emu.Render())
	} else {
		b.WriteString(p.emu.String())
	}
	// The blank rows below the last line written are not text.
	return strings.TrimRight(b.String(), " \r\n")
}

// Output returns the program's most recent raw output (at most
// OutputKeep bytes), escapes included.
func (p *Pane) Output() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]byte(nil), p.out...)
}

// WaitOutput waits until match accepts the raw output (see Output), the
// program exits, or ctx ends.
func (p *Pane) WaitOutput(ctx context.Context, match func(out []byte) bool) error {
	return p.wait(ctx, func() bool { return match(p.out) })
}

// WaitScreen waits until match accepts the visible screen text, the
// program exits, or ctx ends.
func (p *Pane) WaitScreen(ctx context.Context, match func(screen string) bool) error {
	return p.wait(ctx, func() bool { return match(p.emu.String()) })
}

// WaitReady waits until bracketed paste is on and match accepts the
// visible screen text, the program exits, or ctx ends.
func (p *Pane) WaitReady(ctx context.Context, match func(screen string) bool) error {
	return p.wait(ctx, func() bool { return p.modes.Bracketed() && match(p.emu.String()) })
}

func (p *Pane) wait(ctx context.Context, ok func() bool) error {
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.outCond.Broadcast()
		p.mu.Unlock()
	})
	defer stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if ok() {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		select {
		case <-p.exited:
			return ErrExited
		default:
		}
		p.outCond.Wait()
	}
}

// Exited is closed once the program has exited and the pane has read its
// output (the screen shows all of it), or DrainGrace after the exit when
// another process still holds the terminal open.
func (p *Pane) Exited() <-chan struct{} { return p.exited }

// ExitErr is the program's exit status (after Exited).
func (p *Pane) ExitErr() error {
	<-p.exited
	return p.exitErr
}

// Pid is the program's process id (its process group id too).
func (p *Pane) Pid() int { return p.pgid }

// Close ends the pane as closing a Herdr pane does: SIGHUP to the
// program's process group, SIGKILL after KillGrace if the program is
// still there, then the terminal closes. Processes that left the group
// (daemons that call setsid) are not this pane's to end.
func (p *Pane) Close() error {
	p.closeOnce.Do(func() {
		_ = syscall.Kill(-p.pgid, syscall.SIGHUP)
		select {
		case <-p.exited:
		case <-time.After(KillGrace):
			_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
			<-p.exited
		}
		// Whatever else of the group remains goes too.
		_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
		p.inMu.Lock()
		p.inClosed = true
		p.inQ = nil
		p.inCond.Broadcast()
		p.inMu.Unlock()
		p.closeErr = p.ptmx.Close()
		// Ends the responder's read of the emulator's answers.
		if pw, ok := p.emu.InputPipe().(*io.PipeWriter); ok {
			_ = pw.Close()
		}
		p.wg.Wait()
	})
	return p.closeErr
}

// String describes the pane for logs.
func (p *Pane) String() string {
	return fmt.Sprintf("ptypane %s (pid %d)", bytes.TrimSpace([]byte(strings.Join(p.cmd.Args, " "))), p.pgid)
}
