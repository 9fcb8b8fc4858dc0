package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/miramem/mira/cmd/internal/cli"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ergochat/readline"
	"github.com/miramem/mira/agentloop/tools"
)

// The line editor is github.com/ergochat/readline (the maintained fork of
// chzyer/readline) rather than github.com/peterh/liner, for one key:
// Shift-Tab cycles the context mode and redraws the prompt at once, and
// liner cannot bind a key. It keeps what liner gave: it puts the terminal
// in raw mode and reads it only while a prompt is open (its reader is
// woken per key), so the approval questions asked in the middle of an
// answer read their own line, and Ctrl-C reaches the process as SIGINT
// while the model streams. It has history with search (Ctrl-R), tab
// completion, and Ctrl-C and Ctrl-D at the prompt; the history file is
// still written whole and atomically by saveHistory. Ctrl-T still
// transposes characters; Shift-Tab did nothing before.

// agentHistoryPath is the file the prompt's history is kept in:
// $XDG_STATE_HOME/mira/history (~/.local/state/mira/history). It is state
// of this machine, not memory: it stays out of the store, which is
// committed and may be shared.
func agentHistoryPath(o *cli.IO) string {
	dir := o.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home := o.Getenv("HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			home = h
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "mira", "history")
}

// repl runs the interactive session until /quit, Ctrl-D or Ctrl-C twice
// at the prompt. Ctrl-C while a message is answered stops that answer (or
// the tool running), not the session: the process handles SIGINT itself
// from here on.
func (s *agentSession) repl(ctx context.Context) error {
	o := s.o
	// The root context is cancelled by the first SIGINT; the session must
	// outlive it. SIGTERM and SIGHUP still end it.
	base, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()

	hist := agentHistoryPath(o)
	ln, err := newAgentLineEditor(s, hist)
	if err != nil {
		return fmt.Errorf("open the terminal: %w", err)
	}
	s.ln = ln
	defer func() {
		ln.Close()
		s.ln = nil
	}()

	var (
		mu      sync.Mutex
		current context.CancelFunc // the message being answered
	)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, append([]os.Signal{os.Interrupt}, endSignals...)...)
	defer signal.Stop(sigs)
	go func() {
		for {
			select {
			case <-base.Done():
				return
			case sig := <-sigs:
				mu.Lock()
				c := current
				mu.Unlock()
				if sig == os.Interrupt {
					if c != nil {
						c()
					}
					continue
				}
				stop()
				if c != nil {
					c()
					continue
				}
				// At the prompt nothing can be cancelled: put the
				// terminal back and let the signal do what it does.
				ln.Close()
				reraise(sig)
				return
			}
		}
	}()

	st := s.agent.Status()
	fmt.Fprintf(o.Err, "mira-agent · conversation %s · project %s (%s) · model %s\n", st.Conversation, st.Project.Name, st.Project.Root, st.Model)
	fmt.Fprintf(o.Err, "Type a message, /help for commands, Ctrl-D to leave. %d %s in the buffer", st.BufferTurns, agentPlural(st.BufferTurns, "turn", "turns"))
	if st.Summary != nil {
		fmt.Fprint(o.Err, ", and a summary of what came before")
	}
	fmt.Fprintln(o.Err, ".")

	aborted := false
	for {
		line, err := ln.Prompt(s.promptText())
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			if aborted {
				return nil
			}
			aborted = true
			fmt.Fprintln(o.Err, "(Ctrl-C again or Ctrl-D to leave)")
			continue
		case errors.Is(err, io.EOF):
			fmt.Fprintln(o.Err)
			return nil
		case err != nil:
			return fmt.Errorf("read the prompt: %w", err)
		}
		aborted = false
		// A line ending in a backslash goes on on the next one, for
		// messages of several lines. History keeps the lines as typed.
		typed := []string{line}
		for strings.HasSuffix(line, "\\") {
			more, err := ln.Prompt(". ")
			if err != nil {
				typed, line = nil, ""
				break
			}
			typed = append(typed, more)
			line = strings.TrimSuffix(line, "\\") + "\n" + more
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		for _, l := range typed {
			if strings.TrimSpace(l) != "" {
				ln.AppendHistory(l)
			}
		}
		if err := saveHistory(ln.history, hist); err != nil {
			o.Warnf("warning: history not saved: %v", err)
		}
		if strings.HasPrefix(line, "/") {
			quit, err := s.slash(base, line)
			if err != nil {
				o.Warnf("%v", err)
			}
			if quit {
				return nil
			}
			continue
		}
		msg, cancel := context.WithCancel(base)
		mu.Lock()
		current = cancel
		mu.Unlock()
		s.cancel = cancel
		_, err = s.send(msg, line)
		mu.Lock()
		current = nil
		mu.Unlock()
		s.cancel = nil
		cancel()
		if base.Err() != nil {
			return base.Err()
		}
		switch {
		case err == nil:
			s.showMeter()
			s.showSuggestions()
		case msg.Err() != nil:
			fmt.Fprintln(o.Err, "(interrupted)")
		default:
			o.Warnf("%v", err)
		}
	}
}

// saveHistory writes the history file whole, one entry a line, replacing
// it atomically, so that a session killed later still leaves it.
func saveHistory(history []string, path string) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".history-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	for _, l := range history {
		w.WriteString(l)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// agentApprover asks the user whether a tool call may run: at the session's
// prompt in an interactive session, else on the terminal's next line.
type agentApprover struct {
	s  *agentSession
	rd *bufio.Reader
}

// Approve implements tools.Approver.
func (a *agentApprover) Approve(ctx context.Context, tool, summary string) (tools.Decision, error) {
	o := a.s.o
	fmt.Fprintf(o.Err, "mira-agent wants to run %s:\n", tool)
	for _, l := range strings.Split(strings.TrimRight(summary, "\n"), "\n") {
		fmt.Fprintf(o.Err, "    %s\n", l)
	}
	question := fmt.Sprintf("Allow? [y]es, [n]o, [a]lways %s in this session: ", tool)
	for {
		answer, err := a.ask(question)
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			// Ctrl-C at the question stops the whole answer.
			if a.s.cancel != nil {
				a.s.cancel()
			}
			return tools.Deny, context.Canceled
		case err != nil:
			return tools.Deny, err
		}
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
			return tools.AllowOnce, nil
		case "a", "always":
			return tools.AllowAlways, nil
		case "n", "no", "":
			return tools.Deny, nil
		}
		fmt.Fprintln(o.Err, "Answer y, n or a.")
	}
}

func (a *agentApprover) ask(question string) (string, error) {
	if ln := a.s.ln; ln != nil {
		return ln.Prompt(question)
	}
	fmt.Fprint(a.s.o.Err, question)
	if a.rd == nil {
		a.rd = bufio.NewReader(a.s.o.In)
	}
	line, err := a.rd.ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return line, nil
}
