package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/miramem/mira/internal/proc"
)

// staleLockAge is how old a git lock file of unknown origin must be before
// it is taken for the leftover of a killed process and removed. git itself
// never breaks locks, which leaves a repository unusable until someone
// deletes the file by hand; git holds these locks for milliseconds and the
// store serialises its own writers, so ten minutes is far beyond any live
// holder.
const staleLockAge = 10 * time.Minute

// foreignLockGrace is how old a lock of git's must be before it may be
// taken for a crashed git's when no process uses it: git creates a lock
// and opens it in one call, and only closes it right before renaming it
// into place (or, for `git commit`, while its editor and hooks run, when
// its working directory gives it away), so the grace only covers that
// last moment with room to spare.
const foreignLockGrace = 2 * time.Second

// lockMarker is the content of the lock files this package creates. git
// never reads lock files, so the marker costs nothing, and it lets a later
// commit see at once that a lock belongs to a process that no longer runs.
const lockMarker = "mira-gitrepo-lock"

// createLock takes the git lock file at path and marks it as ours; the
// caller removes it to release it. The marker is written to a temporary file
// in tmpDir that is then hard-linked to path: the link fails if the lock
// exists, like an exclusive create, and a lock never exists without its
// marker, whenever its creator is killed. An existing lock is removed when
// it is stale (see lockStale). Otherwise a git command is at work and the
// error wraps ErrLocked. orphan reports that the removed lock was left by a
// process of this package that died while holding it. workDir is the
// repository's work tree.
func createLock(path, tmpDir, workDir string) (orphan bool, err error) {
	tmp, err := os.CreateTemp(tmpDir, "mira-lock-*.tmp")
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(ownMarker())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	for attempt := 0; ; attempt++ {
		err := os.Link(tmp.Name(), path)
		if err == nil {
			return orphan, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return false, err
		}
		stale, ours := lockStale(path, workDir, tmpDir)
		if attempt > 0 || !stale {
			if ours {
				return false, fmt.Errorf("%w: %s exists (a commit of this store is at work)", ErrLocked, path)
			}
			return false, fmt.Errorf("%w: %s exists (a git command is at work in the store; if none is, remove the file)", ErrLocked, path)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("remove stale lock: %w", err)
		}
		orphan = ours
	}
}

func ownMarker() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s pid=%d host=%s\n", lockMarker, os.Getpid(), host)
}

// lockStale reports whether the lock file at path was left behind, and
// whether it carries the marker of this package.
//
// A lock of this package names its process: it is stale when that process
// of this host is gone, or when it is older than staleLockAge (pids get
// reused, hosts renamed).
//
// A lock of git's names nobody. Where /proc tells (Linux), it is stale once
// no process of this host has it open, no git command is working in dirs
// (the work tree and the git directory), and it is older than
// foreignLockGrace: what a git killed midway leaves, which git itself would
// refuse to work past forever. A git running by hand in the store keeps it,
// however long its editor stays open. Elsewhere it is stale only when older
// than staleLockAge. A git run on another host over a network file system
// is not seen; it would lose the lock after the grace like a dead one, the
// reason the store keeps its writers to its own lock.
func lockStale(path string, dirs ...string) (stale, ours bool) {
	f, err := os.Open(path)
	if err != nil {
		return false, false
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := io.ReadFull(f, buf)
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	fields := strings.Fields(line)
	ours = len(fields) == 3 && fields[0] == lockMarker
	var age time.Duration
	if fi, err := f.Stat(); err == nil {
		age = time.Since(fi.ModTime())
	}
	if !ours {
		f.Close() // not to count as a user of it
		if using, known := proc.GitAt(path, dirs...); known {
			return !using && age >= foreignLockGrace, false
		}
		return age >= staleLockAge, false
	}
	if age >= staleLockAge {
		return true, true
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(fields[1], "pid="))
	host, _ := os.Hostname()
	if err != nil || fields[2] != "host="+host || pid == os.Getpid() {
		return false, true
	}
	return !proc.Alive(pid), true
}
