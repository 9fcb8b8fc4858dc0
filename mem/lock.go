package mem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/miramem/mira/internal/proc"
)

// StaleLockAge is how old a lock may get before it is considered abandoned
// even when its process seems alive (pids get reused, hosts get renamed).
// A store write takes milliseconds; an hour is far beyond any honest holder.
const StaleLockAge = time.Hour

// LockInfo is what a lock file records about its holder.
type LockInfo struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Command string    `json:"command,omitempty"`
	Time    time.Time `json:"time"`
}

// LockedError is returned when another writer holds the store lock past the
// timeout.
type LockedError struct {
	Path   string
	Holder LockInfo
}

func (e *LockedError) Error() string {
	who := fmt.Sprintf("pid %d on %s", e.Holder.PID, e.Holder.Host)
	if e.Holder.Command != "" {
		who += " (" + e.Holder.Command + ")"
	}
	return fmt.Sprintf("store is locked by %s since %s (lock file %s)", who, e.Holder.Time.Local().Format(time.DateTime), e.Path)
}

// ErrLocked matches a *LockedError with errors.Is.
var ErrLocked = errors.New("store is locked")

func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Lock is a held store lock.
type Lock struct {
	path     string
	info     LockInfo
	released bool
}

// lockFile is the store's writer lock, next to .git.
const lockFile = ".lock"

// acquire takes the writer lock, waiting up to timeout. The lock is a file
// created with O_EXCL holding the holder's pid, host and time. A lock is
// stale, and is broken, when its process is gone on this host, or when it is
// older than StaleLockAge. Creating with O_EXCL (rather than flock) keeps the
// holder visible to people who look at the store and works the same on
// network file systems.
func acquire(ctx context.Context, path, command string, timeout time.Duration) (*Lock, error) {
	host, _ := os.Hostname()
	me := LockInfo{PID: os.Getpid(), Host: host, Command: command, Time: time.Now().UTC()}
	data, _ := json.Marshal(me)
	deadline := time.Now().Add(timeout)
	wait := 2 * time.Millisecond
	for {
		err := createLockFile(path, append(data, '\n'))
		if err == nil {
			return &Lock{path: path, info: me}, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, err
		}
		holder, rerr := readLock(path)
		if rerr == nil && stale(holder, host) || errors.Is(rerr, errHalfWritten) {
			// Break the stale lock by renaming it aside first: of several
			// processes racing to break it, only one rename succeeds, so
			// none of them can remove a fresh lock another just took.
			aside := fmt.Sprintf("%s.stale.%d", path, os.Getpid())
			if os.Rename(path, aside) == nil {
				if h2, err := readLock(aside); err == nil && !stale(h2, host) && !errors.Is(err, errHalfWritten) {
					// We raced: someone took a fresh lock between read and
					// rename. Put it back.
					os.Rename(aside, path)
				} else {
					os.Remove(aside)
				}
			}
			continue
		}
		if time.Now().After(deadline) {
			if rerr != nil {
				holder = LockInfo{}
			}
			return nil, &LockedError{Path: path, Holder: holder}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		if wait < 100*time.Millisecond {
			wait *= 2
		}
	}
}

// createLockFile makes the lock file at path holding data, failing with an
// error matching os.ErrExist when it exists. The data go to a file of
// their own first, synced, then hard-linked to path: the
// link fails if the lock exists, as an exclusive create would, and the
// lock never exists without its holder's name. A lock created first and
// written after was empty for as long as its writer waited between the
// two, and another writer that found it so for a second took it for a
// dead writer's and broke it: two writers committed at once under load.
// Where hard links are refused, the file is created exclusively and then
// written. A writer killed before the link leaves its file
// (.lock.PID.RANDOM.tmp), which the next lock removes (removeLockTemps).
func createLockFile(path string, data []byte) error {
	// A name of its own for each try: the file is the lock once linked,
	// and another goroutine's try must not write into it.
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+"."+strconv.Itoa(os.Getpid())+".*.tmp")
	if err != nil {
		return fmt.Errorf("write lock file: %w", err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write lock file: %w", err)
	}
	err = lockLink(tmp, path)
	os.Remove(tmp)
	if err == nil {
		removeLockTemps(path)
		return nil
	}
	if errors.Is(err, os.ErrExist) {
		return err
	}
	// No hard links here: the file is created, then written.
	if err := writeSynced(path, data); err != nil {
		if errors.Is(err, os.ErrExist) {
			return err
		}
		os.Remove(path)
		return fmt.Errorf("write lock file: %w", err)
	}
	return nil
}

// lockLink is os.Link, a variable for tests.
var lockLink = os.Link

// writeSynced creates name, which must not exist, writes data and syncs it.
func writeSynced(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	return errors.Join(werr, serr, f.Close())
}

// removeLockTemps removes the files of writers killed before they linked
// them to the lock at path (createLockFile): those of processes gone.
func removeLockTemps(path string) {
	tmps, _ := filepath.Glob(globQuote(path) + ".*.*.tmp")
	for _, t := range tmps {
		pid, _, _ := strings.Cut(strings.TrimPrefix(t, path+"."), ".")
		if n, err := strconv.Atoi(pid); err == nil && n != os.Getpid() && !proc.Alive(n) {
			os.Remove(t)
		}
	}
}

var errHalfWritten = errors.New("lock file is empty or half written")

func readLock(path string) (LockInfo, error) {
	var li LockInfo
	data, err := os.ReadFile(path)
	if err != nil {
		return li, err
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		// A holder killed between create and write leaves an empty file.
		// Give a live writer a moment: only call it half written when the
		// file is older than a second.
		if st, err := os.Stat(path); err == nil && time.Since(st.ModTime()) > time.Second {
			return li, errHalfWritten
		}
		return li, errors.New("lock file is being written")
	}
	if err := json.Unmarshal(data, &li); err != nil {
		if st, err := os.Stat(path); err == nil && time.Since(st.ModTime()) > time.Second {
			return li, errHalfWritten
		}
		return li, err
	}
	return li, nil
}

func stale(li LockInfo, host string) bool {
	if time.Since(li.Time) > StaleLockAge {
		return true
	}
	if li.Host == host && li.PID > 0 && !proc.Alive(li.PID) {
		return true
	}
	return false
}

// Unlock releases the lock if it is still ours. It may be called more than
// once: only the first call acts, so a deferred Unlock after an early one
// can never remove the next writer's lock.
func (l *Lock) Unlock() error {
	if l == nil || l.released {
		return nil
	}
	l.released = true
	li, err := readLock(l.path)
	if err != nil {
		// Unreadable or half written: not the lock we wrote, which was
		// complete and synced before acquire returned.
		return fmt.Errorf("lock file changed under us: %w", err)
	}
	if li.PID != l.info.PID || !li.Time.Equal(l.info.Time) {
		return errors.New("lock was taken over by pid " + strconv.Itoa(li.PID))
	}
	return os.Remove(l.path)
}
