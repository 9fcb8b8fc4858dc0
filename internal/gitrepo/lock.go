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

// lockMarker is the content of the lock files this package creates. git
// never reads lock files, so the marker costs nothing, and it lets a later
// commit see at once that a lock belongs to a process that no longer runs.
const lockMarker = "mira-gitrepo-lock"

// createLock takes the git lock file at path and marks it as ours; the
// caller removes it to release it. The marker is written to a temporary file
// in tmpDir that is then hard-linked to path: the link fails if the lock
// exists, like an exclusive create, and a lock never exists without its
// marker, whenever its creator is killed. An existing lock is removed when
// it is stale: marked by a process of this host that is gone, or older than
// staleLockAge. Otherwise a git command is at work and the error wraps
// ErrLocked. orphan reports that the removed lock was left by a process of
// this package that died while holding it.
func createLock(path, tmpDir string) (orphan bool, err error) {
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
		stale, ours := lockStale(path)
		if attempt > 0 || !stale {
			return false, fmt.Errorf("%w: %s exists", ErrLocked, path)
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
func lockStale(path string) (stale, ours bool) {
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
	if fi, err := f.Stat(); err == nil && time.Since(fi.ModTime()) >= staleLockAge {
		return true, ours
	}
	if !ours {
		return false, false
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(fields[1], "pid="))
	host, _ := os.Hostname()
	if err != nil || fields[2] != "host="+host || pid == os.Getpid() {
		return false, true
	}
	return !proc.Alive(pid), true
}
