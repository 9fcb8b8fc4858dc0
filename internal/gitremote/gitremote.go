// Package gitremote talks to git remotes through the git command, so that
// whatever the user set up for git (ssh keys and agents, credential
// helpers, proxies, insteadOf rewrites) works for the store as well. It
// never prompts: a command that would ask for a password fails instead,
// which is what a job run from cron needs.
//
// Failures are sorted into the few kinds a caller acts on: the remote
// cannot be reached (ErrUnreachable), it refused the credentials
// (ErrAuth), a push lost a race with another writer (ErrRejected), or the
// remote has no such branch yet (ErrNoBranch). git's messages are the only
// signal it gives, so they are read with LC_ALL=C.
package gitremote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

var (
	// ErrUnreachable is a remote that could not be reached or read: no
	// network, an unknown host, a path that is not a repository.
	ErrUnreachable = errors.New("remote unreachable")
	// ErrAuth is a remote that refused the credentials, or asked for
	// ones that could not be given without a terminal.
	ErrAuth = errors.New("authentication failed")
	// ErrRejected is a push the remote refused because its branch moved
	// on since the last fetch.
	ErrRejected = errors.New("push rejected: the remote branch moved")
	// ErrNoBranch is a fetch of a branch the remote does not have.
	ErrNoBranch = errors.New("remote has no such branch")
	// ErrNoRemote is a remote name the repository does not configure.
	ErrNoRemote = errors.New("no such remote")
)

// Error is a git command that failed, with what git said.
type Error struct {
	Op     string // fetch, push, clone
	Kind   error  // one of the Err values above, or nil
	Stderr string // git's message, trimmed
	Err    error  // the process error
}

func (e *Error) Error() string {
	msg := lastLines(e.Stderr, 3)
	if msg == "" {
		msg = e.Err.Error()
	}
	if e.Kind != nil {
		return fmt.Sprintf("%s: %v: %s", e.Op, e.Kind, msg)
	}
	return fmt.Sprintf("%s: %s", e.Op, msg)
}

func (e *Error) Unwrap() []error { return []error{e.Kind, e.Err} }

// Git runs git commands in one repository.
type Git struct {
	// Dir is the repository's work tree.
	Dir string
	// Env is added to the environment of every command (KEY=VALUE).
	Env []string
}

// run runs git with args (the whole command line after "git") and
// returns its standard output; op names the operation in errors.
func (g *Git) run(ctx context.Context, op string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = g.Dir
	dieWithParent(cmd)
	cmd.Env = append(os.Environ(),
		"LC_ALL=C", "LANG=C", "LANGUAGE=C",
		"GIT_TERMINAL_PROMPT=0", // never wait for a password
		"GIT_ASKPASS=true",      // an askpass program answers nothing: fail at once
		"SSH_ASKPASS=true",
		"GIT_OPTIONAL_LOCKS=0",
	)
	cmd.Env = append(cmd.Env, g.Env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("%s: git is not installed: %w", op, err)
		}
		stderr := strings.TrimSpace(errb.String())
		return "", &Error{Op: op, Kind: classify(stderr), Stderr: stderr, Err: err}
	}
	return out.String(), nil
}

// classify sorts git's error message into the kinds callers act on.
func classify(stderr string) error {
	s := strings.ToLower(stderr)
	has := func(subs ...string) bool {
		for _, x := range subs {
			if strings.Contains(s, x) {
				return true
			}
		}
		return false
	}
	switch {
	case has("[rejected]", "non-fast-forward", "fetch first", "failed to update ref", "cannot lock ref", "incorrect old value"):
		return ErrRejected
	case has("couldn't find remote ref", "could not find remote ref"):
		return ErrNoBranch
	case has("authentication failed", "permission denied", "could not read username", "could not read password",
		"terminal prompts disabled", "returned error: 401", "returned error: 403", "invalid username or password",
		"access denied", "host key verification failed"):
		return ErrAuth
	case has("could not resolve host", "connection refused", "connection timed out", "timed out", "network is unreachable",
		"no route to host", "unable to access", "does not appear to be a git repository", "could not read from remote repository",
		"not a git repository", "repository not found", "no such file or directory", "connection reset", "broken pipe",
		"the remote end hung up", "unable to connect", "early eof"):
		return ErrUnreachable
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var keep []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "hint:") || strings.HasPrefix(l, "To ") {
			continue
		}
		keep = append(keep, l)
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, "; ")
}

// AbortMerge undoes a merge that git stopped with conflicts (a hand-run
// git pull or git merge): the index and work tree go back to HEAD as they
// were before it. It returns the commit that was being merged, or "" when
// no merge was under way.
func (g *Git) AbortMerge(ctx context.Context) (string, error) {
	data, err := os.ReadFile(filepath.Join(g.Dir, ".git", "MERGE_HEAD"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if _, err := g.run(ctx, "merge --abort", "merge", "--abort"); err != nil {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

// RemoteURL returns the URL of a configured remote, or an error wrapping
// ErrNoRemote.
func (g *Git) RemoteURL(ctx context.Context, remote string) (string, error) {
	out, err := g.run(ctx, "config", "config", "--get", "remote."+remote+".url")
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && ge.Stderr == "" {
			return "", fmt.Errorf("%q: %w (add it with: git -C %s remote add %s URL)", remote, ErrNoRemote, g.Dir, remote)
		}
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// TrackingRef is the ref that holds what was last fetched of a remote's
// branch: refs/remotes/<remote>/<branch>, as git itself keeps it.
func TrackingRef(remote, branch string) string { return "refs/remotes/" + remote + "/" + branch }

// Fetch fetches branch of remote into its tracking ref, forced (the
// remote's history is the remote's to rewrite). A remote without the
// branch gives an error wrapping ErrNoBranch.
func (g *Git) Fetch(ctx context.Context, remote, branch string) error {
	spec := "+refs/heads/" + branch + ":" + TrackingRef(remote, branch)
	var err error
	for attempt := range 3 {
		_, err = g.run(ctx, "fetch", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", remote, spec)
		if !errors.Is(err, ErrRejected) {
			return err
		}
		// The tracking ref moved while this fetch updated it: a git
		// process left by a killed sync was still finishing. The ref is
		// only a copy of the remote's; fetch it again.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		}
	}
	return err
}

// Push pushes commit to branch of remote, only as a fast-forward: when the
// branch moved since the last fetch the error wraps ErrRejected. The
// tracking ref follows on success.
func (g *Git) Push(ctx context.Context, remote, branch, commit string) error {
	_, err := g.run(ctx, "push", "push", "--quiet", "--no-verify", remote, commit+":refs/heads/"+branch)
	if err != nil {
		return err
	}
	_, err = g.run(ctx, "update-ref", "update-ref", TrackingRef(remote, branch), commit)
	return err
}

// Clone clones branch of url into dir (which must not exist) as a
// repository whose remote is named remote.
func Clone(ctx context.Context, url, dir, remote, branch string, env []string) error {
	g := &Git{Env: env}
	_, err := g.run(ctx, "clone", "clone", "--quiet", "--no-tags", "--origin", remote, "--branch", branch, "--single-branch", "--", url, dir)
	return err
}

// Changed lists the files under dirs that differ from the last commit:
// changed, added (not ignored) or removed, as `git status` sees them.
func (g *Git) Changed(ctx context.Context, dirs ...string) ([]string, error) {
	args := append([]string{"-c", "core.quotePath=false", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--"}, dirs...)
	out, err := g.run(ctx, "status", args...)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rec := range strings.Split(out, "\x00") {
		if len(rec) < 4 {
			continue
		}
		paths = append(paths, rec[3:])
	}
	return paths, nil
}
