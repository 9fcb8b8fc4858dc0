package mem

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLockExcludesAndTimesOut(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	l, err := acquire(context.Background(), p, "a", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = acquire(context.Background(), p, "b", 50*time.Millisecond)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) || le.Holder.PID != os.Getpid() || le.Holder.Command != "a" {
		t.Fatalf("second acquire = %v, want LockedError naming pid %d", err, os.Getpid())
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := acquire(context.Background(), p, "b", time.Second)
	if err != nil {
		t.Fatalf("acquire after unlock: %v", err)
	}
	// A second Unlock of the first lock must not remove the new holder's.
	if err := l.Unlock(); err != nil {
		t.Fatalf("second Unlock = %v", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("second Unlock removed another holder's lock: %v", err)
	}
	l2.Unlock()
}

func TestLockDoesNotRemoveForeignLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	l, err := acquire(context.Background(), p, "a", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Someone broke our lock and took it; their file is still empty.
	os.Remove(p)
	os.WriteFile(p, nil, 0o644)
	if err := l.Unlock(); err == nil {
		t.Error("Unlock of a replaced lock succeeded")
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("Unlock removed a lock that was not ours: %v", err)
	}
}

func TestStaleLockIsBroken(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	host, _ := os.Hostname()
	tests := map[string]string{
		"dead pid":  `{"pid":2147483646,"host":"` + host + `","time":"` + time.Now().UTC().Format(time.RFC3339) + `"}`,
		"too old":   `{"pid":1,"host":"elsewhere","time":"2001-01-01T00:00:00Z"}`,
		"truncated": ``,
		"half json": `{"pid":12`,
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			os.WriteFile(p, []byte(content), 0o644)
			old := time.Now().Add(-time.Minute)
			os.Chtimes(p, old, old)
			l, err := acquire(context.Background(), p, "x", 2*time.Second)
			if err != nil {
				t.Fatalf("acquire over a stale lock: %v", err)
			}
			l.Unlock()
			if aside, _ := filepath.Glob(p + ".stale.*"); len(aside) > 0 {
				t.Errorf("breaking the lock left %v", aside)
			}
		})
	}
	// A lock file being written (unparsable but fresh) is respected.
	os.WriteFile(p, []byte(`{"pid":12`), 0o644)
	if _, err := acquire(context.Background(), p, "x", 30*time.Millisecond); err == nil {
		t.Error("acquire over a lock file written a moment ago succeeded")
	}
	// A live holder elsewhere is respected.
	os.WriteFile(p, []byte(`{"pid":1,"host":"elsewhere","time":"`+time.Now().UTC().Format(time.RFC3339)+`"}`), 0o644)
	if _, err := acquire(context.Background(), p, "x", 30*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Errorf("acquire over a live foreign lock = %v, want ErrLocked", err)
	}
}

// TestUnlockAfterTakeover: a writer whose lock another process took over
// (a stale-lock break) does not remove the new owner's lock, and says so.
func TestUnlockAfterTakeover(t *testing.T) {
	st, err := Open(t.Context(), t.TempDir(), "test", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	l, err := st.Lock(t.Context(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	other := []byte(`{"pid":1,"host":"elsewhere","command":"other","time":"2026-11-25T00:00:00Z"}` + "\n")
	path := filepath.Join(st.Root, lockFile)
	if err := os.WriteFile(path, other, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err == nil {
		t.Errorf("Unlock of a lock taken over succeeded")
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != string(other) {
		t.Errorf("the new owner's lock was touched: %q, %v", b, err)
	}
}

// TestLockNeverEmpty: the lock file exists only with its holder's name in
// it, however long the holder stalls right after making it. A lock that
// was made first and written after stood empty meanwhile, and a writer
// that found it so for a second broke it as a dead writer's: under load,
// two writers committed at once (TestConcurrentWriters).
func TestLockNeverEmpty(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".lock")
	held := make(chan struct{})
	release := make(chan struct{})
	defer func(f func(string, string) error) { lockLink = f }(lockLink)
	lockLink = func(old, new string) error {
		if err := os.Link(old, new); err != nil {
			return err
		}
		li, err := readLock(new)
		if err != nil || li.PID != os.Getpid() || li.Command != "stalled" {
			t.Errorf("the lock as it appears: %+v, %v", li, err)
		}
		close(held)
		<-release // the holder stalls here, its lock made
		return nil
	}
	got := make(chan error, 1)
	go func() {
		l, err := acquire(context.Background(), p, "stalled", time.Second)
		if err == nil {
			err = l.Unlock()
		}
		got <- err
	}()
	<-held
	lockLink = os.Link
	// Past the second after which an empty lock is a dead writer's.
	old := time.Now().Add(-2 * time.Second)
	os.Chtimes(p, old, old)
	if _, err := acquire(context.Background(), p, "other", 100*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Errorf("acquire beside a stalled holder = %v, want ErrLocked", err)
	}
	close(release)
	if err := <-got; err != nil {
		t.Errorf("the stalled holder lost its lock: %v", err)
	}
	if tmps, _ := filepath.Glob(p + ".*.tmp"); len(tmps) > 0 {
		t.Errorf("left behind: %v", tmps)
	}
}
