package agent

import (
	"bufio"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/ergochat/readline"
)

// agentHistoryMax is the most entries the prompt's history keeps.
const agentHistoryMax = 1000

// agentModeKey is the key that cycles the context mode at the prompt:
// Shift-Tab, which terminals send as ESC [ Z.
const agentModeKey = readline.MetaShiftTab

// agentLineEditor is the REPL's line editor: the prompt with the context
// mode, history, completion of slash commands, and the mode key.
type agentLineEditor struct {
	s  *agentSession
	rl *readline.Instance
	// history is what the history file gets, oldest first.
	history []string
	// modeKey is set while the main prompt is open: the mode key works
	// there, not at an approval question.
	modeKey bool
}

// newAgentLineEditor opens the terminal's line editor, its history read
// from the file at hist (if any).
func newAgentLineEditor(s *agentSession, hist string) (*agentLineEditor, error) {
	e := &agentLineEditor{s: s}
	cpr := &agentCursorAnswer{in: os.Stdin, out: os.Stdout}
	rl, err := readline.NewFromConfig(&readline.Config{
		Prompt:                 s.promptText(),
		AutoComplete:           agentCompleter{},
		DisableAutoSaveHistory: true,
		HistoryLimit:           agentHistoryMax,
		HistorySearchFold:      true,
		InterruptPrompt:        "^C",
		EOFPrompt:              "\n", // nothing: the REPL ends the line itself
		FuncFilterInputRune:    e.filter,
		Stdin:                  cpr,
		Stdout:                 cpr,
	})
	if err != nil {
		return nil, err
	}
	e.rl = rl
	if f, err := os.Open(hist); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			if l := sc.Text(); strings.TrimSpace(l) != "" {
				e.AppendHistory(l)
			}
		}
		f.Close()
	}
	return e, nil
}

// filter takes the mode key at the main prompt: the context mode of the
// next message moves on (off → light → heavy → off) and the prompt is
// redrawn with it, the line typed so far kept.
func (e *agentLineEditor) filter(r rune) (rune, bool) {
	if r != agentModeKey || !e.modeKey {
		return r, true
	}
	if err := e.s.agent.SetContextMode(agentNextMode(e.s.agent.ContextMode())); err == nil {
		e.rl.SetPrompt(e.s.promptText())
	}
	return r, false
}

// Prompt reads a line after the prompt p. The mode key works at the main
// prompt alone.
func (e *agentLineEditor) Prompt(p string) (string, error) {
	e.modeKey = p == e.s.promptText()
	defer func() { e.modeKey = false }()
	e.rl.SetPrompt(p)
	return e.rl.ReadLine()
}

// AppendHistory adds a line to the history, the file's and the editor's.
func (e *agentLineEditor) AppendHistory(l string) {
	e.history = append(e.history, l)
	if n := len(e.history) - agentHistoryMax; n > 0 {
		e.history = append(e.history[:0], e.history[n:]...)
	}
	e.rl.SaveToHistory(l)
}

// Close puts the terminal back. It may be called from another goroutine
// while a prompt is open, and more than once.
func (e *agentLineEditor) Close() error { return e.rl.Close() }

// agentCompleter completes slash commands, their subcommands and the
// modes of /mode at the prompt.
type agentCompleter struct{}

// Do implements readline.AutoCompleter: the rest of each completion of
// the line up to the cursor.
func (agentCompleter) Do(line []rune, pos int) ([][]rune, int) {
	prefix := string(line[:pos])
	var out [][]rune
	for _, c := range agentCompleteWithMode(prefix) {
		if rest, ok := strings.CutPrefix(c, prefix); ok {
			out = append(out, []rune(rest))
		}
	}
	return out, pos
}

// agentCursorAnswer stands between the line editor and the terminal and
// answers the editor's cursor position queries (ESC [ 6n) itself: the
// prompt always starts a line, since everything the REPL prints ends
// with a newline, so the answer is column 1. A terminal that answers no
// such query (a serial console, an editor's shell buffer) would leave the
// editor waiting for the answer, with every key typed held back.
type agentCursorAnswer struct {
	in  io.Reader
	out io.Writer

	mu      sync.Mutex
	pending []byte // answers not yet read
}

// agentCursorQuery is the query the line editor writes alone.
const agentCursorQuery = "\x1b[6n"

func (c *agentCursorAnswer) Write(p []byte) (int, error) {
	if string(p) == agentCursorQuery {
		c.mu.Lock()
		c.pending = append(c.pending, "\x1b[1;1R"...)
		c.mu.Unlock()
		return len(p), nil
	}
	return c.out.Write(p)
}

func (c *agentCursorAnswer) Read(p []byte) (int, error) {
	c.mu.Lock()
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		c.mu.Unlock()
		return n, nil
	}
	c.mu.Unlock()
	return c.in.Read(p)
}
