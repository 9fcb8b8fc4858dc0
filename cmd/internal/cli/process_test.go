package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/miramem/mira/cmd/internal/clitest"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/miramem/mira/mem"
)

// binDir holds links named after each command to this test binary, which
// testscript.Main turns into that command when run under the name.
func binDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for name := range commands {
		if err := os.Symlink(exe, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type procRunner struct {
	t    *testing.T
	bin  string
	home string
}

func newRunner(t *testing.T) *procRunner {
	return &procRunner{t: t, bin: binDir(t), home: filepath.Join(t.TempDir(), "home")}
}

func (r *procRunner) cmd(name string, args ...string) *exec.Cmd {
	c := exec.Command(filepath.Join(r.bin, name), args...)
	c.Env = append(os.Environ(), "MIRA_SERVE=0", "MIRA_HOME="+r.home, "MIRA_PROJECT=test", "XDG_CONFIG_HOME="+r.home+".config",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=t@example.com")
	return c
}

func (r *procRunner) run(name string, args ...string) string {
	r.t.Helper()
	var out, errb bytes.Buffer
	c := r.cmd(name, args...)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		r.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

func git(t *testing.T, dir string, args ...string) string { return clitest.Git(t, dir, args...) }

// TestConcurrentWriters: four processes at once, each remembering 50
// memories one command at a time, end with all 200 stored, one commit each,
// a clean repository and a complete index.
func TestConcurrentWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 200 processes")
	}
	r := newRunner(t)
	r.run("mira-remember", "seed memory") // create the store first
	const writers, each = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				c := r.cmd("mira-remember", "--lock-timeout", "60s", fmt.Sprintf("writer %d memory %d zebracorn", w, i))
				if out, err := c.CombinedOutput(); err != nil {
					errs <- fmt.Errorf("writer %d #%d: %v\n%s", w, i, err, out)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := strings.TrimSpace(git(t, r.home, "rev-list", "--count", "HEAD")); n != strconv.Itoa(2+writers*each) {
		t.Errorf("commits = %s, want %d", n, 2+writers*each)
	}
	if st := git(t, r.home, "status", "--porcelain"); st != "" {
		t.Errorf("git status not clean:\n%s", st)
	}
	git(t, r.home, "fsck", "--full", "--strict")
	files, _ := filepath.Glob(filepath.Join(r.home, "entries/global/notes/*.md"))
	if len(files) != 1+writers*each {
		t.Errorf("%d entry files, want %d", len(files), 1+writers*each)
	}
	out := r.run("mira-recall", "--mode", "lexical", "zebracorn", "-k", "1000")
	if n := strings.Count(out, "\n"); n != writers*each {
		t.Errorf("recall found %d of the %d memories", n, writers*each)
	}
}

// TestKilledWriters kills mira-remember with SIGKILL at random moments and
// checks after each kill that no entry is half written, git fsck is clean,
// and the next commands work (stale lock broken, index recovered).
func TestKilledWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("kills 50 processes")
	}
	r := newRunner(t)
	r.run("mira-remember", "seed memory")
	var victims []string // memories for the forgets to kill
	for i := range 20 {
		out := r.run("mira-remember", fmt.Sprintf("memory %d to forget", i))
		var rec struct{ ID string }
		if err := json.Unmarshal([]byte(out), &rec); err != nil {
			t.Fatal(err)
		}
		victims = append(victims, rec.ID)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var input, records strings.Builder
	for i := range 30 {
		fmt.Fprintf(&input, "batch memory %d about crash safety\n", i)
		fmt.Fprintf(&records, "{\"text\": \"loaded memory %d about crash safety\"}\n", i)
	}
	const kills = 50
	for i := range kills {
		c := r.cmd("mira-remember", "--lines", "--tag", "k"+strconv.Itoa(i))
		c.Stdin = strings.NewReader(input.String())
		switch i % 4 {
		case 0:
			c = r.cmd("mira-recall", "crash safety")
		case 1:
			c = r.cmd("mira-forget", victims[i%len(victims)])
		case 2:
			if i%8 == 2 {
				c = r.cmd("mira-summarize", "--max-entries", "40")
			}
		case 3:
			if i%8 == 7 { // a load in parts (rememberStream)
				c = r.cmd("mira-remember", "--jsonl", "--tag", "k"+strconv.Itoa(i))
				c.Stdin = strings.NewReader(records.String())
			}
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(150_000)) * time.Microsecond)
		c.Process.Signal(syscall.SIGKILL)
		c.Wait()

		// Every file under entries/ is whole.
		filepath.WalkDir(filepath.Join(r.home, "entries"), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
				return nil
			}
			data, rerr := os.ReadFile(p)
			if rerr != nil {
				t.Errorf("kill %d: %v", i, rerr)
				return nil
			}
			rel, _ := filepath.Rel(r.home, p)
			if _, perr := mem.Parse(filepath.ToSlash(rel), data); perr != nil {
				t.Errorf("kill %d: half-written entry: %v", i, perr)
			}
			return nil
		})
		git(t, r.home, "fsck", "--full", "--no-dangling")
	}
	// The next commands recover: lock broken, index usable, writes land,
	// and a writer killed between its file writes and its commit left
	// nothing behind that git sees as changed.
	r.run("mira-remember", "--lock-timeout", "5s", "after the storm")
	if st := git(t, r.home, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("git status after recovery:\n%s", st)
	}
	// Nor temporary files, which git ignores: the next writer removed them.
	filepath.WalkDir(r.home, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == ".index" {
			return filepath.SkipDir // the index's own, cleaned by its next update
		}
		if err == nil && strings.HasSuffix(p, ".tmp") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
	t.Logf("%s commits after %d kills", strings.TrimSpace(git(t, r.home, "rev-list", "--count", "HEAD")), kills)
	out := r.run("mira-recall", "after the storm")
	if !strings.Contains(out, "after the storm") {
		t.Errorf("recall after kills = %q", out)
	}
	st := r.run("mira-index", "status", "--output", "jsonl")
	if !strings.Contains(st, `"stale":0`) && !strings.Contains(st, `"Stale":0`) {
		t.Errorf("index not fresh after recovery: %s", st)
	}
}
