//go:build unix

package relay

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestBuilding: a generation newer than the current one whose lock a
// process holds is a build under way, which a client starting the server
// waits for past StartWait; an idle one, an older one or one from a build
// that died long ago is not.
func TestBuilding(t *testing.T) {
	dir := t.TempDir()
	gen := func(at time.Time) string {
		name := fmt.Sprintf("g-%d", at.UnixNano())
		if err := os.MkdirAll(filepath.Join(dir, name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "lock"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return name
	}
	hold := func(name string) func() {
		fd, err := syscall.Open(filepath.Join(dir, name, "lock"), syscall.O_RDWR|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		return func() { syscall.Close(fd) }
	}
	now := time.Now()
	cur := gen(now.Add(-time.Minute))
	if err := os.WriteFile(filepath.Join(dir, "CURRENT"), []byte(cur+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if building(dir) {
		t.Fatal("building with only the current generation")
	}
	release := hold(cur) // a reader or writer of the current one
	if building(dir) {
		t.Error("the current generation's lock taken for a build")
	}
	release()

	next := gen(now)
	if building(dir) {
		t.Error("building with a newer generation nobody holds")
	}
	release = hold(next)
	if !building(dir) {
		t.Error("not building while a newer generation's lock is held")
	}
	release()

	old := gen(now.Add(-2 * buildAge))
	os.WriteFile(filepath.Join(dir, "CURRENT"), []byte(old+"\n"), 0o600)
	os.RemoveAll(filepath.Join(dir, next))
	os.RemoveAll(filepath.Join(dir, cur))
	stale := gen(now.Add(-buildAge - time.Minute))
	release = hold(stale)
	defer release()
	if building(dir) {
		t.Error("a build started over an hour ago taken for one under way")
	}
	if err := os.MkdirAll(filepath.Join(dir, "g-5"), 0o700); err != nil {
		t.Fatal(err)
	}
	if held(filepath.Join(dir, "g-5", "lock")) {
		t.Error("a missing lock file taken for a held one")
	}
	if _, err := os.Stat(filepath.Join(dir, "g-5", "lock")); err == nil {
		t.Error("held created a lock file")
	}
}

// TestWaitReady: the client wakes up on the server's byte or on the end
// of the pipe, and gives up at its deadline.
func TestWaitReady(t *testing.T) {
	pipe := func() (*os.File, *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return r, w
	}
	far := time.Now().Add(time.Minute)
	r, w := pipe()
	go func() { time.Sleep(20 * time.Millisecond); Ready(w) }()
	if !waitReady(r, far) {
		t.Error("no wake-up on the server's byte")
	}
	r, w = pipe()
	go func() { time.Sleep(20 * time.Millisecond); w.Close() }()
	if !waitReady(r, far) {
		t.Error("no wake-up when the server closed its end")
	}
	r, _ = pipe()
	if waitReady(r, time.Now().Add(20*time.Millisecond)) {
		t.Error("woke up with nothing on the pipe")
	}
}
