// Package receiver is the receiving end of agent.prompt: the program
// reading an agent pane's terminal. [Model] is the simulator's model of
// an agent's input box, built from how real Claude Code, Codex, OpenCode
// and Pi TUIs took typed text; a real program in a PTY is another
// [Receiver]. The world (package herdrstate) owns the terminal and calls
// a Receiver with its lock held; a Model reaches the world only through
// its [Terminal].
//
//   - Herdr's write: the text, as a bracketed paste (ESC[200~ … ESC[201~)
//     once the agent is ready (status not unknown; the world file's
//     bracketed_paste fixes it), raw before; then Enter ("\r") 300 ms
//     later, after agent.prompt answered.
//   - The composer holds everything typed until an Enter: a user's draft
//     (world file draft), raw typing (newlines stay; a raw "\r" is Enter)
//     and pastes. At Enter it becomes one submission, merged per kind:
//     claude wraps each paste as <pasted_content id="N">…</pasted_content
//     id="N"> and puts a blank line before it; codex, pi and the plain
//     default glue pieces with no separator; opencode joins two pastes with
//     one space and adds one trailing space to what the model gets. An
//     Enter on an empty composer does nothing; a stuck composer (stuck)
//     never submits; Codex swallows an Enter while still reading raw
//     typing (0.83 ms a byte).
//   - The turn starts after the kind's submit latency (Claude 0.4 s + 5.7
//     µs/byte, Codex 0.1 s + 14.7 s × (size/256 KiB)², OpenCode 1.5 s, Pi
//     0.14 s + 37.5 µs/byte, others 0.1 s; submit_ms overrides): the
//     submission is recorded ([Terminal].Submitted) and the agent becomes
//     working, then idle (done outside the focused pane) after the turn
//     time (turn_ms, default 1 s; negative never ends). An agent the world
//     file starts working finishes that turn after turn_ends_ms (absent:
//     when the world's SetStatus says so).
//   - While working, claude, opencode, pi and the default queue the
//     submission; everything queued during one turn becomes one turn,
//     sent shortly after the turn ends (0.2 s, 80 ms, 20 ms, 50 ms),
//     whoever ended it (the world's SetStatus too). Codex submits at once
//     (10 ms), steering: the partial answer is discarded
//     ([Model.Interrupts]) and the agent stays working.
//   - A user types through pane.send_text (raw: the composer holds it as
//     a draft; a "\r" is Enter) and presses keys through pane.send_keys
//     (one write a key): Enter submits the composer as a user turn; ctrl+u
//     deletes back to the start of the line, ctrl+c clears the composer,
//     backspace deletes one character (a paste whole), and two Escapes in
//     a row clear Claude Code's composer (the other kinds keep it). A write
//     that is ESC alone is the Escape key.
//   - pane.read and agent.read show the turns and the composer with the
//     kind's screen signs ([Model.Screen]).
//
// The package knows nothing of the world or the server: it imports only
// Herdr's schema types.
package receiver
