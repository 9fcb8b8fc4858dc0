package history

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Why the git command, when it is there: listing the files every
// non-merge commit changed, on bare mirrors, 2 shared cores under heavy
// load, wall and CPU time (this process and git) per whole read
// (BenchmarkRead):
//
//	                       git log --raw     go-git tree diffs
//	spf13/cobra    1.1k    0.14 s  0.08 s    0.37 s  0.10 s
//	pallets/flask  5.5k    0.73 s  0.23 s    1.90 s  0.49 s
//	prometheus    13.3k    3.2 s   1.4 s     12.2 s  3.1 s
//	git/git       60.8k   21.8 s   7.8 s     139 s   26 s
//
// go-git takes 2.6 to 6.4 times the wall time and 1.3 to 3.3 times the
// CPU, more as the history grows: beyond the 3 times that would have
// made one code path worth it. go-git stays as the fallback.

// errCLIRefused is a git command that would not read the repository
// (one owned by another user, a format it does not know): Read falls
// back to go-git, which runs nothing configured in the repository.
var errCLIRefused = errors.New("git refused the repository")

// gitEnv is the environment of the git commands: the variables that
// would point git at another repository than root's (set when Mira runs
// from a git hook, for one) are removed, replacement refs are ignored as
// go-git ignores them, nothing is locked or fetched, nothing prompts.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
			"GIT_PREFIX", "GIT_SHALLOW_FILE", "GIT_REPLACE_REF_BASE", "GIT_GRAFT_FILE",
			"LC_ALL", "LANG", "LANGUAGE":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0",
		"GIT_NO_REPLACE_OBJECTS=1", "GIT_NO_LAZY_FETCH=1", "GIT_PAGER=cat")
}

// git runs a git command in dir and returns its output; a git that fails
// gives an *exitError with its message.
func git(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, gitError(args[0], err, errb.String())
	}
	return out.Bytes(), nil
}

type exitError struct {
	op     string
	code   int
	stderr string
}

func (e *exitError) Error() string {
	return fmt.Sprintf("git %s: %s", e.op, strings.TrimSpace(e.stderr))
}

func gitError(op string, err error, stderr string) error {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return fmt.Errorf("git %s: %w", op, err)
	}
	switch s := strings.ToLower(stderr); {
	case strings.Contains(s, "not a git repository"):
		return ErrNoRepo
	case strings.Contains(s, "dubious ownership"), strings.Contains(s, "unknown repository format"),
		strings.Contains(s, "unknown repository extension"), strings.Contains(s, "expected git repo version"):
		return fmt.Errorf("%w: %s", errCLIRefused, strings.TrimSpace(stderr))
	}
	return &exitError{op: op, code: ee.ExitCode(), stderr: stderr}
}

func readCLI(ctx context.Context, abs, since string, max int) ([]Commit, string, error) {
	out, err := git(ctx, abs, "rev-parse", "--show-prefix", "--git-path", "shallow")
	if err != nil {
		return nil, "", err
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) < 2 {
		return nil, "", fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	prefix, shallowFile := lines[0], lines[1]
	if !filepath.IsAbs(shallowFile) {
		shallowFile = filepath.Join(abs, shallowFile)
	}
	shallow, err := readShallow(shallowFile)
	if err != nil {
		return nil, "", err
	}
	out, err = git(ctx, abs, "rev-parse", "-q", "--verify", "HEAD^{commit}")
	var ee *exitError
	if errors.As(err, &ee) && ee.code == 1 {
		return nil, "", nil // no commit yet
	}
	if err != nil {
		return nil, "", err
	}
	head := strings.TrimSpace(string(out))
	if since != "" {
		if _, ok := parseHash(since); !ok {
			return nil, "", fmt.Errorf("%q is not a commit hash", since)
		}
		if strings.EqualFold(since, head) {
			return nil, head, nil
		}
		_, err := git(ctx, abs, "merge-base", "--is-ancestor", since, head)
		if errors.As(err, &ee) && (ee.code == 1 || ee.code == 128) {
			return nil, "", ErrRewritten // not an ancestor, or no such commit
		}
		if err != nil {
			return nil, "", err
		}
	}
	// The -c settings and options override what a user's configuration
	// could change in this output: a root commit shown with its files,
	// no signature checks (which would run gpg), paths from the top, no
	// submodule changes hidden.
	args := []string{"-c", "log.showRoot=true", "-c", "log.showSignature=false", "-c", "diff.relative=false",
		"log", "--no-merges", "--no-renames", "--ignore-submodules=none",
		"--raw", "--no-abbrev", "--no-ext-diff", "--no-textconv", "--no-color", "-z",
		"--format=%x01%H%x00%an%x00%ae%x00%at%x00%s"}
	if max > 0 {
		args = append(args, "-n", strconv.Itoa(max+len(shallow)))
	}
	if prefix != "" {
		// Changes under root only, relative to it; --full-history keeps
		// commits whose changes a merge dropped.
		args = append(args, "--relative", "--full-history")
	}
	args = append(args, head)
	if since != "" {
		args = append(args, "^"+since)
	}
	args = append(args, "--")
	if prefix != "" {
		args = append(args, ".")
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = abs
	cmd.Env = gitEnv()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("git log: %w", err)
	}
	commits, perr := parseLog(bufio.NewReaderSize(stdout, 64<<10), shallow, max)
	if perr != nil {
		// Stop git (it may still be writing) before waiting for it.
		_ = cmd.Process.Kill()
	}
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	if perr != nil && !errors.Is(perr, errEnough) {
		return nil, "", fmt.Errorf("git log: %w", perr)
	}
	if werr != nil && perr == nil {
		return nil, "", gitError("log", werr, errb.String())
	}
	return commits, head, nil
}

// readShallow returns the commits whose parents a shallow clone lacks.
func readShallow(name string) (map[string]bool, error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string]bool{}
	for _, l := range strings.Fields(string(data)) {
		m[l] = true
	}
	return m, nil
}

var errEnough = errors.New("enough commits")

// parseLog reads what git log printed: per commit "\x01" and the fields
// of the format, each ended by NUL, then a newline and the raw diff lines
// ":<modes> <hashes> <status>\x00<path>\x00".
func parseLog(r *bufio.Reader, shallow map[string]bool, max int) ([]Commit, error) {
	var out []Commit
	field := func() (string, error) {
		b, err := r.ReadSlice(0)
		if errors.Is(err, bufio.ErrBufferFull) {
			// A field longer than the buffer (a very long subject).
			long := append([]byte(nil), b...)
			rest, err := r.ReadBytes(0)
			if err != nil {
				return "", err
			}
			return string(append(long, rest[:len(rest)-1]...)), nil
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
		return string(b[:len(b)-1]), nil
	}
	for {
		c, err := r.ReadByte()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if c != 1 {
			return nil, fmt.Errorf("unexpected byte %q at the start of a commit", c)
		}
		var f [5]string
		for i := range f {
			if f[i], err = field(); err != nil {
				return nil, err
			}
		}
		sec, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("commit %s: bad date %q", f[0], f[3])
		}
		var d changes
		for {
			b, err := r.Peek(1)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if b[0] == '\n' {
				r.ReadByte()
				continue
			}
			if b[0] != ':' {
				break
			}
			meta, err := field()
			if err != nil {
				return nil, err
			}
			path, err := field()
			if err != nil {
				return nil, err
			}
			if err := d.addRaw(meta, path); err != nil {
				return nil, fmt.Errorf("commit %s: %w", f[0], err)
			}
		}
		if shallow[f[0]] {
			continue
		}
		files, renames, removed := d.result()
		out = append(out, Commit{
			Hash:    f[0],
			Author:  f[1],
			Email:   f[2],
			When:    unixTime(sec),
			Subject: strings.TrimSpace(f[4]),
			Files:   files,
			Renames: renames,
			Removed: removed,
		})
		if max > 0 && len(out) >= max {
			return out, errEnough
		}
	}
}

// addRaw adds one raw diff line: ":<old mode> <new mode> <old hash> <new
// hash> <status>" and its path.
func (d *changes) addRaw(meta, path string) error {
	f := strings.Fields(strings.TrimPrefix(meta, ":"))
	if len(f) < 5 {
		return fmt.Errorf("malformed raw diff line %q", meta)
	}
	switch f[4][0] {
	case 'A':
		h, _ := parseHash(f[3])
		mode, _ := strconv.ParseUint(f[1], 8, 32)
		d.added = append(d.added, fileAt{path, h, uint32(mode)})
	case 'D':
		h, _ := parseHash(f[2])
		mode, _ := strconv.ParseUint(f[0], 8, 32)
		d.removed = append(d.removed, fileAt{path, h, uint32(mode)})
	default:
		d.changed = append(d.changed, path)
	}
	return nil
}
