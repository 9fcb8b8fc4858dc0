//go:build unix

package proc

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestAlive: this process runs; a child runs until it is killed, counts
// as gone while it is an unreaped zombie, and no pid below 1 runs.
func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Error("Alive(own pid) = false")
	}
	for _, pid := range []int{0, -1} {
		if Alive(pid) {
			t.Errorf("Alive(%d) = true", pid)
		}
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	pid := cmd.Process.Pid
	if !Alive(pid) {
		t.Error("Alive(running child) = false")
	}
	cmd.Process.Kill()
	// Not reaped yet: a zombie, which signal 0 still reaches.
	deadline := time.Now().Add(5 * time.Second)
	for Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if Alive(pid) {
		t.Error("Alive(killed, unreaped child) = true")
	}
	cmd.Wait()
	if Alive(pid) {
		t.Error("Alive(reaped child) = true")
	}
}
