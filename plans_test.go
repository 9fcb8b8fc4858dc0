package mira

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/miramem/mira/mem"
)

// callMemory is a Memory over a bare home, enough for the call records.
func callMemory(t *testing.T) *Memory {
	t.Helper()
	return Detached(&Config{}, t.TempDir())
}

func callLine(i int) []byte {
	return fmt.Appendf(nil, `{"id":"c%05d","pad":"%s"}`, i, strings.Repeat("x", 80))
}

func TestCallLogRotationKeepsUnderCap(t *testing.T) {
	dir := t.TempDir()
	cur, old := filepath.Join(dir, "chat.jsonl"), filepath.Join(dir, "chat.jsonl.1")
	const limit = 4096
	for i := range 500 {
		if err := appendRotated(cur, old, callLine(i), limit); err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, p := range []string{cur, old} {
			if fi, err := os.Stat(p); err == nil {
				total += fi.Size()
			}
		}
		if total > limit {
			t.Fatalf("after record %d the files hold %d bytes, over the cap of %d", i, total, limit)
		}
	}
	var got []string
	for _, p := range []string{old, cur} {
		if err := readCallFile(p, func(err error) { t.Errorf("unexpected note: %v", err) }, func(l []byte) bool {
			got = append(got, string(l))
			return true
		}); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) < 20 || got[len(got)-1] != string(callLine(499)) {
		t.Fatalf("kept %d records ending with %q, want the newest ones up to c00499", len(got), got[len(got)-1])
	}
	// What is kept is the newest records, none missing between them.
	first := 500 - len(got)
	for i, l := range got {
		if l != string(callLine(first+i)) {
			t.Fatalf("record %d is %.20s, want c%05d: a record between kept ones was lost", i, l, first+i)
		}
	}
}

func TestCallLogTornLineSkipped(t *testing.T) {
	m := callMemory(t)
	for i := range 3 {
		if err := m.AppendCall("chat", callLine(i)); err != nil {
			t.Fatal(err)
		}
	}
	_, cur := m.callFiles("chat")
	// A kill in the middle of the fourth record's write.
	f, err := os.OpenFile(cur, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(callLine(3)[:30])
	f.Close()

	var notes []error
	lines, err := m.ReadCalls("chat", func(err error) { notes = append(notes, err) })
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 3 || len(notes) != 1 {
		t.Fatalf("read %d records and %d notes, want 3 and a note of the torn line", len(lines), len(notes))
	}
	var le *CallLineError
	if !errors.As(notes[0], &le) || le.Line != 4 || !strings.Contains(le.Error(), "chat.jsonl:4") {
		t.Errorf("note = %v, want the torn line 4 named", notes[0])
	}

	// The next record starts on a line of its own: neither it nor an
	// older one is lost to the torn line.
	if err := m.AppendCall("chat", callLine(4)); err != nil {
		t.Fatal(err)
	}
	notes = nil
	lines, err = m.ReadCalls("chat", func(err error) { notes = append(notes, err) })
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 4 || string(lines[3]) != string(callLine(4)) || len(notes) != 1 {
		t.Fatalf("after another append: %d records (last %.20s), %d notes; want 4 ending with c00004, and the one torn line", len(lines), lines[len(lines)-1], len(notes))
	}
	if line, err := m.FindCall("c00004", nil); err != nil || string(line) != string(callLine(4)) {
		t.Errorf("FindCall(c00004) = %s, %v", line, err)
	}
	_, err = m.FindCall("nosuch", nil)
	var inv *InvalidError
	if !errors.Is(err, ErrNoCall) || !errors.As(err, &inv) {
		t.Errorf("FindCall(nosuch) = %v, want an *InvalidError wrapping ErrNoCall", err)
	}
}

func TestCallLogPrivateAndChecked(t *testing.T) {
	m := callMemory(t)
	if err := m.AppendCall("chat", []byte("{\"id\":\"a\"}\n{\"id\":\"b\"}")); err == nil {
		t.Error("AppendCall took two lines as one record")
	}
	if err := m.AppendCall("../x", callLine(1)); err == nil {
		t.Error("AppendCall took a conversation that is no scope")
	}
	if err := m.AppendCall("chat", callLine(1)); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	_, cur := m.callFiles("chat")
	for p, want := range map[string]os.FileMode{cur: mem.FileMode, filepath.Dir(cur): mem.DirMode} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}

// A conversation may be named like another's rotated file ("chat.1"):
// rotating one must not overwrite, nor read as its own, the other's.
func TestCallLogConversationsNamedLikeRotation(t *testing.T) {
	m := Detached(&Config{}, t.TempDir())
	m.cfg.Agent.PlanLogMiB = 1
	other := []byte(`{"id":"other"}`)
	if err := m.AppendCall("chat.1", other); err != nil {
		t.Fatal(err)
	}
	big := fmt.Appendf(nil, `{"id":"big","pad":"%s"}`, strings.Repeat("x", 6000))
	for range 200 { // 1.2 MB: chat rotates
		if err := m.AppendCall("chat", big); err != nil {
			t.Fatal(err)
		}
	}
	lines, err := m.ReadCalls("chat.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || string(lines[0]) != string(other) {
		t.Errorf("conversation chat.1 holds %d records after chat rotated, want its own one", len(lines))
	}
	lines, err = m.ReadCalls("chat", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if string(l) == string(other) {
			t.Error("conversation chat reads chat.1's record as its own")
		}
	}
}
