package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/miramem/mira/cmd/internal/relay"
)

// A command may bring the index up to date more than once for one request:
// a recall that leaves tool traffic out searches again for more, and a read
// that meets a changed index tries once more. Each time must answer; the
// second once waited for good on a result the first had taken.
func TestReadyTwice(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix sockets")
	}
	home, err := os.MkdirTemp("", "mira-srv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	if err := os.MkdirAll(filepath.Join(home, ".index"), 0o700); err != nil {
		t.Fatal(err)
	}
	syncs := 0
	sync := func(context.Context) error { syncs++; return nil }
	run := func(req relay.Request, ready func() error, stdout, stderr *bytes.Buffer) (int, bool) {
		for range 3 {
			if err := ready(); err != nil {
				stderr.WriteString(err.Error())
				return 1, true
			}
		}
		stdout.WriteString("answered\n")
		return 0, true
	}
	s, err := Listen(home, sync, run, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("unix", relay.Socket(home))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A deadline far above the milliseconds this takes: a hang fails the
	// test instead of stopping the suite.
	c.SetDeadline(time.Now().Add(30 * time.Second))
	b, _ := json.Marshal(relay.Request{Command: "mira-recall", Args: []string{"x"}, Dir: home})
	if _, err := c.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var out []byte
	for {
		kind, p, err := relay.ReadFrame(br)
		if err != nil {
			t.Fatalf("no answer after the first frames (%q): %v", out, err)
		}
		if kind == relay.Stdout {
			out = append(out, p...)
			break
		}
	}
	if string(out) != "answered\n" {
		t.Fatalf("stdout %q", out)
	}
}
