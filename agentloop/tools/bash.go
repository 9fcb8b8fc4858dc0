package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/miramem/mira/internal/text"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// killGrace is how long a stopped command's processes get between SIGTERM
// and SIGKILL.
const killGrace = 2 * time.Second

// bashTool is the bash tool.
type bashTool struct{ e *env }

func (t bashTool) schema() *jsonschema.Definition {
	return object(map[string]jsonschema.Definition{
		"command": {Type: jsonschema.String, Description: "The command line to run with bash -c in the project root."},
		"timeout": {Type: jsonschema.Integer, Description: fmt.Sprintf("Timeout in seconds. Default %d, at most %d.",
			int(t.e.limits.BashTimeout.Seconds()), int(t.e.limits.BashMaxTimeout.Seconds()))},
		"description": {Type: jsonschema.String, Description: "What the command does, in a few words, shown to the user when asking for approval."},
	}, "command")
}

// Definition implements Tool.
func (t bashTool) Definition() openai.Tool {
	desc := "Run a shell command in the project root, for builds, tests, git and the like; stdin is empty. " +
		"The combined stdout and stderr and the exit code are returned. Use read_file, write_file, edit_file, glob and grep for files instead of cat, sed, find or grep. " +
		"On timeout the command and everything it started are stopped. Needs the user's approval."
	if t.e.confined {
		desc += " The command may change files only under the project root, the paths the user allowed and $TMPDIR " +
			"(a private directory, removed when the command ends); writes anywhere else are denied."
		if !t.e.allowGit {
			desc += " Git's configuration and hooks (.git/config, .git/hooks) are read-only to it; git add, commit and checkout work."
		}
	}
	return schemaTool("bash", desc, t.schema())
}

// Run implements Tool.
func (t bashTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		Command     string `json:"command"`
		Timeout     int    `json:"timeout"`
		Description string `json:"description"`
	}
	if err := decodeArgs(args, t.schema(), &a); err != nil {
		return errorf("%v", err), nil
	}
	if strings.TrimSpace(a.Command) == "" {
		return errorf("command is empty"), nil
	}
	if a.Timeout < 0 {
		return errorf("timeout must be a positive number of seconds"), nil
	}
	timeout, note := t.e.limits.BashTimeout, ""
	if a.Timeout > 0 {
		timeout = time.Duration(a.Timeout) * time.Second
		if most := t.e.limits.BashMaxTimeout; timeout > most || a.Timeout > int(most/time.Second) {
			timeout = most
			note = fmt.Sprintf("[The timeout of %ds is more than the maximum; it ran with %s.]\n", a.Timeout, most)
		}
	}
	summary := a.Command
	if d := strings.TrimSpace(a.Description); d != "" {
		summary += "\n# " + d
	}
	t.e.noticeUnconfined()
	if res, ok, err := t.e.approve(ctx, "bash", summary); !ok {
		return res, err
	}
	return t.run(ctx, a.Command, timeout, note)
}

// run runs command and reports its output and how it ended.
func (t bashTool) run(ctx context.Context, command string, timeout time.Duration, note string) (Result, error) {
	// The output goes to a file rather than a pipe: Wait then returns when
	// the shell exits, even if a process it left in the background still
	// holds the output open, and stdout and stderr share one offset, so
	// their lines interleave as on a terminal.
	out, err := os.CreateTemp("", "mira-bash-*.out")
	if err != nil {
		return errorf("cannot run the command: %v", err), nil
	}
	defer func() {
		out.Close()
		os.Remove(out.Name())
	}()
	env := append(os.Environ(), "NO_COLOR=1", "PAGER=cat", "GIT_PAGER=cat")
	var cmd *exec.Cmd
	var guard *gitGuard
	if t.e.confined {
		// The command may write only in its own temporary directory,
		// so TMPDIR points there; it goes with the command, like the
		// files a shell's here-documents leave.
		tmp, err := os.MkdirTemp("", "mira-bash-tmp-*")
		if err != nil {
			return errorf("cannot run the command: %v", err), nil
		}
		defer os.RemoveAll(tmp)
		write := append([]string{t.e.ws.root, tmp}, t.e.ws.allowed...)
		bind, readOnly := t.e.guardMounts()
		if !t.e.allowGit {
			// After the mounts, which may create a hooks directory.
			guard = newGitGuard(t.e.ws.root)
		}
		if cmd, err = confinedCommand(t.e.shell, command, write, append(env, "TMPDIR="+tmp), bind, readOnly); err != nil {
			return errorf("cannot run %s: %v", t.e.shell, err), nil
		}
	} else {
		cmd = exec.Command(t.e.shell, "-c", command)
		cmd.Env = env
		newGroup(cmd)
	}
	cmd.Dir = t.e.ws.root
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return errorf("cannot run %s: %v", t.e.shell, err), nil
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var stopped string
	select {
	case <-done:
	case <-timer.C:
		stopped = fmt.Sprintf("[Timed out after %s: the command and the processes it started were stopped.]", timeout)
	case <-ctx.Done():
		stopped = "[Interrupted: the command and the processes it started were stopped.]"
	}
	if stopped != "" {
		terminateGroup(cmd)
		select {
		case <-done:
		case <-time.After(killGrace):
			killGroup(cmd)
			<-done
		}
	}

	undone := ""
	if guard != nil {
		undone = guard.restore()
	}
	var b strings.Builder
	b.WriteString(note)
	var sp *spilled
	if size, err := out.Seek(0, io.SeekEnd); err == nil && t.e.arts != nil && size > int64(t.e.limits.ResultBytes) {
		// A long output is streamed into an artifact, whole.
		sp = t.spill(out, command)
	}
	var text string
	if sp != nil {
		b.WriteString(sp.view)
	} else {
		var err error
		if text, err = readCapped(out, t.e.limits.BashOutputBytes); err != nil {
			return errorf("cannot read the command's output: %v", err), nil
		}
		text = plainOutput(text)
		if text == "" {
			b.WriteString("(no output)\n")
		} else {
			b.WriteString(text)
			if !strings.HasSuffix(text, "\n") {
				b.WriteString("\n")
			}
		}
	}
	var trailer strings.Builder
	if sp != nil || text != "" {
		if t.e.confined && (writeDenied(text) || sp != nil && sp.writeDenied) {
			trailer.WriteString(deniedNote)
		}
		if t.e.confined && !t.e.allowGit && (gitDenied(text) || sp != nil && sp.gitDenied) {
			trailer.WriteString(gitDeniedNote)
		}
	}
	trailer.WriteString(undone)
	res := Result{IsError: undone != "", Reverted: undone != ""}
	if stopped != "" {
		trailer.WriteString(stopped)
		res.IsError = true
	} else {
		status, ok := exitStatus(cmd.ProcessState)
		fmt.Fprintf(&trailer, "[%s]", status)
		res.IsError = res.IsError || !ok
	}
	b.WriteString(trailer.String())
	if sp != nil {
		// The artifact ends as the result does, with how the command
		// ended.
		if err := sp.finish(trailer.String()); err != nil {
			return errorf("cannot store the command's output: %v", err), nil
		}
		res.Artifacts = sp.rels
		res.paged = true
		b.Reset()
		b.WriteString(sp.note + "\n" + note + sp.view + trailer.String())
	}
	res.Content = b.String()
	if stopped != "" && ctx.Err() != nil {
		return res, ctx.Err()
	}
	return res, nil
}

// readCapped reads f whole when it holds at most limit bytes, else its
// first and last limit/2 bytes around a note of what was left out: the start of
// the output says what ran, the end how it ended.
func readCapped(f *os.File, limit int64) (string, error) {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return "", err
	}
	if size <= limit {
		buf := make([]byte, size)
		_, err := f.ReadAt(buf, 0)
		if err == io.EOF {
			err = nil
		}
		return string(buf), err
	}
	half := limit / 2
	head := make([]byte, half)
	if _, err := f.ReadAt(head, 0); err != nil && err != io.EOF {
		return "", err
	}
	tail := make([]byte, half)
	if _, err := f.ReadAt(tail, size-half); err != nil && err != io.EOF {
		return "", err
	}
	h := trimPartialRune(string(head))
	tl := string(tail)
	for len(tl) > 0 && !utf8.RuneStart(tl[0]) {
		tl = tl[1:]
	}
	omitted := size - int64(len(h)) - int64(len(tl))
	return fmt.Sprintf("%s\n[… %s of output omitted …]\n%s", h, text.Size(int64(omitted)), tl), nil
}

// trimPartialRune drops an incomplete UTF-8 sequence from the end of s.
func trimPartialRune(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i]
			}
			return s
		}
	}
	return s
}

// ansiEscape matches terminal control sequences: CSI (colours, cursor
// movement) and OSC (titles, hyperlinks).
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)`)

// plainOutput turns terminal output into the text a person would have seen:
// control sequences dropped, and of a line rewritten with carriage returns
// (progress bars) only its last state kept.
func plainOutput(s string) string {
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = ansiEscape.ReplaceAllString(s, "")
	}
	if strings.IndexByte(s, '\r') < 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if j := strings.LastIndexByte(l, '\r'); j >= 0 {
			l = l[j+1:]
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// noticeUnconfined tells the user, the first time bash is called, that its
// commands are not confined here, or that git's files and the memory
// store are kept from them by less than a mount namespace.
func (e *env) noticeUnconfined() {
	if e.notice == nil {
		return
	}
	if !e.confined {
		e.unconfinedOnce.Do(func() { e.notice(unconfinedNotice()) })
		return
	}
	if e.allowGit && len(e.ws.protected) == 0 {
		return
	}
	if err := e.namespaces(); err != nil {
		e.unconfinedOnce.Do(func() { e.notice(noNamespaceNotice(err, !e.allowGit, e.protectedWritable())) })
	}
}

// namespaces reports why bash's commands cannot run in a mount namespace
// of their own, or nil; it asks the kernel once.
func (e *env) namespaces() error {
	e.nsOnce.Do(func() { e.nsErr = mountNamespaces() })
	return e.nsErr
}

// protectedWritable returns the protected paths that a confined command
// could otherwise write: those under the root or an allowed path, or
// holding one of them.
func (e *env) protectedWritable() []string {
	var ps []string
	for _, p := range e.ws.protected {
		holds := within(e.ws.root, p)
		for _, a := range e.ws.allowed {
			holds = holds || within(a, p)
		}
		if holds || e.ws.inside(p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// guardMounts returns what a confined command's namespace holds in
// place (see sandboxSpec): the git directories and the read-only git
// configuration and hooks unless the user allowed changing them, and the
// protected paths it could otherwise write. None where there are no
// namespaces: git's files are then put back after the command, and the
// notice says so.
func (e *env) guardMounts() (bind, readOnly []string) {
	prot := e.protectedWritable()
	if (e.allowGit && len(prot) == 0) || e.namespaces() != nil {
		return nil, nil
	}
	if !e.allowGit {
		bind, readOnly = gitMounts(projectGitDirs(e.ws.root))
	}
	for _, p := range prot {
		if _, err := os.Lstat(p); err == nil {
			readOnly = append(readOnly, p)
		}
	}
	return bind, readOnly
}
