package history

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// repo is a git repository made for a test with the git command.
type repo struct {
	t   *testing.T
	dir string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: these tests build their repositories with it")
	}
	r := &repo{t: t, dir: filepath.Join(t.TempDir(), "project")}
	if err := os.Mkdir(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *repo) git(args ...string) string {
	return r.gitAt(time.Time{}, "", args...)
}

// gitAt runs git in the repository as who ("Name <email>") at when.
func (r *repo) gitAt(when time.Time, who string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	name, email := "Tester", "tester@example.com"
	if who != "" {
		n, e, _ := strings.Cut(who, " <")
		name, email = n, strings.TrimSuffix(e, ">")
	}
	date := "2020-01-01T00:00:00Z"
	if !when.IsZero() {
		date = when.UTC().Format(time.RFC3339)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HOME="+r.dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME="+name, "GIT_AUTHOR_EMAIL="+email, "GIT_COMMITTER_NAME="+name, "GIT_COMMITTER_EMAIL="+email,
		"GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *repo) write(path, content string) {
	r.t.Helper()
	name := filepath.Join(r.dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// commit commits everything in the work tree and returns the hash.
func (r *repo) commit(when time.Time, who, msg string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.gitAt(when, who, "commit", "-q", "--allow-empty", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

const (
	alice = "Alice <alice@example.com>"
	bob   = "Bob <bob@example.com>"
	carol = "Carol <carol@example.com>"
)

// sample builds the history most tests read:
//
//	c1 2020-01-01 Alice  add a.go b.go
//	c2 2020-01-10 Bob    a.go b.go c.go
//	c3 2020-02-01 alice  a.go c.go            (upper-case e-mail)
//	c4 2020-03-01 Bob    d.go b.go            (on branch feature)
//	c5 2020-03-05 Alice  c.go -> sub/c2.go    (rename without change)
//	m  2020-04-01 Alice  merge feature        (a merge: left out)
//	c7 2020-05-01 Carol  a.go and 60 new files under gen/ (over the cap)
//	c8 2020-06-01 Alice  a.go sub/c2.go, removes d.go
type sample struct {
	*repo
	c map[string]string // commit name -> hash
}

func newSample(t *testing.T) *sample {
	s := &sample{repo: newRepo(t), c: map[string]string{}}
	s.write("a.go", "a1\n")
	s.write("b.go", "b1\n")
	s.c["c1"] = s.commit(day("2020-01-01"), alice, "add a and b")
	s.write("a.go", "a2\n")
	s.write("b.go", "b2\n")
	s.write("c.go", "c2\n")
	s.c["c2"] = s.commit(day("2020-01-10"), bob, "add c")
	s.write("a.go", "a3\n")
	s.write("c.go", "c3\n")
	s.c["c3"] = s.commit(day("2020-02-01"), "alice <Alice@Example.COM>", "change a and c")
	s.git("checkout", "-q", "-b", "feature")
	s.write("d.go", "d4\n")
	s.write("b.go", "b4\n")
	s.c["c4"] = s.commit(day("2020-03-01"), bob, "add d")
	s.git("checkout", "-q", "main")
	if err := os.MkdirAll(filepath.Join(s.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	s.git("mv", "c.go", "sub/c2.go")
	s.c["c5"] = s.commit(day("2020-03-05"), alice, "move c")
	s.gitAt(day("2020-04-01"), alice, "merge", "-q", "--no-ff", "-m", "merge feature", "feature")
	s.c["m"] = s.git("rev-parse", "HEAD")
	s.write("a.go", "a7\n")
	for i := range 60 {
		s.write(fmt.Sprintf("gen/f%02d.go", i), fmt.Sprintf("package gen // %d\n", i))
	}
	s.c["c7"] = s.commit(day("2020-05-01"), carol, "generate")
	s.write("a.go", "a8\n")
	s.write("sub/c2.go", "c8\n")
	if err := os.Remove(filepath.Join(s.dir, "d.go")); err != nil {
		t.Fatal(err)
	}
	s.c["c8"] = s.commit(day("2020-06-01"), alice, "change a and c2, drop d\n\nbody")
	return s
}

// readers are the two ways of reading: every test runs with both.
var readers = []struct {
	name string
	read func(context.Context, string, string, int) ([]Commit, string, error)
}{{"cli", readCLI}, {"gogit", readGoGit}}

func hashes(cs []Commit) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Hash)
	}
	return out
}

func TestReadSample(t *testing.T) {
	s := newSample(t)
	gen := make([]string, 60)
	for i := range gen {
		gen[i] = fmt.Sprintf("gen/f%02d.go", i)
	}
	want := []Commit{
		{Hash: s.c["c8"], Author: "Alice", Email: "alice@example.com", When: day("2020-06-01"), Subject: "change a and c2, drop d",
			Files: []string{"a.go", "d.go", "sub/c2.go"}, Removed: []string{"d.go"}},
		{Hash: s.c["c7"], Author: "Carol", Email: "carol@example.com", When: day("2020-05-01"), Subject: "generate",
			Files: append([]string{"a.go"}, gen...)},
		{Hash: s.c["c5"], Author: "Alice", Email: "alice@example.com", When: day("2020-03-05"), Subject: "move c",
			Files: []string{"sub/c2.go"}, Renames: []Rename{{"c.go", "sub/c2.go"}}},
		{Hash: s.c["c4"], Author: "Bob", Email: "bob@example.com", When: day("2020-03-01"), Subject: "add d",
			Files: []string{"b.go", "d.go"}},
		{Hash: s.c["c3"], Author: "alice", Email: "Alice@Example.COM", When: day("2020-02-01"), Subject: "change a and c",
			Files: []string{"a.go", "c.go"}},
		{Hash: s.c["c2"], Author: "Bob", Email: "bob@example.com", When: day("2020-01-10"), Subject: "add c",
			Files: []string{"a.go", "b.go", "c.go"}},
		{Hash: s.c["c1"], Author: "Alice", Email: "alice@example.com", When: day("2020-01-01"), Subject: "add a and b",
			Files: []string{"a.go", "b.go"}},
	}
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			got, head, err := rd.read(context.Background(), s.dir, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			if head != s.c["c8"] {
				t.Errorf("head = %s, want %s", head, s.c["c8"])
			}
			if len(got) != len(want) {
				t.Fatalf("got commits %v, want %v", hashes(got), hashes(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if !g.When.Equal(w.When) {
					t.Errorf("commit %d: When = %v, want %v", i, g.When, w.When)
				}
				g.When = w.When
				if !reflect.DeepEqual(g, w) {
					t.Errorf("commit %d:\n got %+v\nwant %+v", i, g, w)
				}
			}
			// At most max, newest first.
			got, _, err = rd.read(context.Background(), s.dir, "", 2)
			if err != nil || !reflect.DeepEqual(hashes(got), []string{s.c["c8"], s.c["c7"]}) {
				t.Errorf("max 2: %v, %v", hashes(got), err)
			}
			// From a commit on.
			got, _, err = rd.read(context.Background(), s.dir, s.c["c3"], 0)
			if err != nil || !reflect.DeepEqual(hashes(got), []string{s.c["c8"], s.c["c7"], s.c["c5"], s.c["c4"]}) {
				t.Errorf("since c3: %v, %v", hashes(got), err)
			}
			got, head, err = rd.read(context.Background(), s.dir, s.c["c8"], 0)
			if err != nil || len(got) != 0 || head != s.c["c8"] {
				t.Errorf("since HEAD: %v, %s, %v", hashes(got), head, err)
			}
		})
	}
}

// A subdirectory of the work tree reads the changes under it, with paths
// relative to it.
func TestReadSubdirectory(t *testing.T) {
	s := newSample(t)
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			got, _, err := rd.read(context.Background(), filepath.Join(s.dir, "sub"), "", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].Hash != s.c["c8"] || got[1].Hash != s.c["c5"] ||
				!reflect.DeepEqual(got[0].Files, []string{"c2.go"}) || !reflect.DeepEqual(got[1].Files, []string{"c2.go"}) {
				t.Errorf("got %+v", got)
			}
			got, _, err = rd.read(context.Background(), filepath.Join(s.dir, "sub"), "", 1)
			if err != nil || !reflect.DeepEqual(hashes(got), []string{s.c["c8"]}) {
				t.Errorf("max 1: %v, %v", hashes(got), err)
			}
		})
	}
}

func TestReadNoRepo(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			got, head, err := rd.read(context.Background(), dir, "", 0)
			if !errors.Is(err, ErrNoRepo) || got != nil || head != "" {
				t.Errorf("got %v, %q, %v; want ErrNoRepo", got, head, err)
			}
		})
	}
	if _, _, err := Read(context.Background(), dir, "", 0); !errors.Is(err, ErrNoRepo) {
		t.Errorf("Read: %v, want ErrNoRepo", err)
	}
}

func TestReadEmptyRepo(t *testing.T) {
	r := newRepo(t)
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			got, head, err := rd.read(context.Background(), r.dir, "", 0)
			if err != nil || got != nil || head != "" {
				t.Errorf("got %v, %q, %v; want nothing", got, head, err)
			}
		})
	}
}

// A rewritten history (amend, reset) is reported, so the caller starts
// over; so is a since that does not exist.
func TestReadRewritten(t *testing.T) {
	s := newSample(t)
	s.gitAt(day("2020-07-01"), alice, "commit", "-q", "--amend", "-m", "amended")
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			if _, _, err := rd.read(context.Background(), s.dir, s.c["c8"], 0); !errors.Is(err, ErrRewritten) {
				t.Errorf("since the amended commit: %v, want ErrRewritten", err)
			}
			if _, _, err := rd.read(context.Background(), s.dir, strings.Repeat("ab", 20), 0); !errors.Is(err, ErrRewritten) {
				t.Errorf("since a missing commit: %v, want ErrRewritten", err)
			}
			if _, _, err := rd.read(context.Background(), s.dir, "HEAD~1", 0); err == nil || errors.Is(err, ErrRewritten) {
				t.Errorf("since a name, not a hash: %v, want an error", err)
			}
		})
	}
	s.git("reset", "-q", "--hard", s.c["c5"])
	for _, rd := range readers {
		t.Run(rd.name+"/reset", func(t *testing.T) {
			if _, _, err := rd.read(context.Background(), s.dir, s.c["c7"], 0); !errors.Is(err, ErrRewritten) {
				t.Errorf("HEAD reset below since: %v, want ErrRewritten", err)
			}
		})
	}
}

// A shallow clone's history ends at its boundary without an error; the
// boundary commit itself is left out, as its parent, and so what it
// changed, is unknown.
func TestReadShallow(t *testing.T) {
	s := newSample(t)
	clone := filepath.Join(t.TempDir(), "shallow")
	s.git("clone", "-q", "--depth", "2", "file://"+s.dir, clone)
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			got, head, err := rd.read(context.Background(), clone, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			if head != s.c["c8"] || !reflect.DeepEqual(hashes(got), []string{s.c["c8"]}) {
				t.Errorf("got %v (head %s), want only c8", hashes(got), head)
			}
		})
	}
}

// A linked worktree (its .git is a file) reads the shared history.
func TestReadWorktree(t *testing.T) {
	s := newSample(t)
	wt := filepath.Join(t.TempDir(), "wt")
	s.git("worktree", "add", "-q", "-b", "other", wt, s.c["c5"])
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			got, head, err := rd.read(context.Background(), wt, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{s.c["c5"], s.c["c3"], s.c["c2"], s.c["c1"]}
			if head != s.c["c5"] || !reflect.DeepEqual(hashes(got), want) {
				t.Errorf("got %v (head %s), want %v", hashes(got), head, want)
			}
		})
	}
}

// snapshot lists every file under dir with its size, mode and time.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		m[p] = fmt.Sprintf("%d %v %v", fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Reading writes nothing in the repository, and works when .git cannot be
// written. (Run as root, the permissions are not enforced; the snapshot
// of .git, taken before and after, still shows that nothing was written.)
func TestReadReadOnly(t *testing.T) {
	s := newSample(t)
	gitDir := filepath.Join(s.dir, ".git")
	want := snapshot(t, gitDir)
	chmod := func(mask fs.FileMode, add bool) {
		err := filepath.WalkDir(gitDir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			m := fi.Mode().Perm() &^ mask
			if add {
				m = fi.Mode().Perm() | mask
			}
			return os.Chmod(p, m)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	chmod(0o222, false)
	t.Cleanup(func() { chmod(0o200, true) })
	want = snapshot(t, gitDir)
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			for _, since := range []string{"", s.c["c3"]} {
				got, _, err := rd.read(context.Background(), s.dir, since, 0)
				if err != nil || len(got) == 0 {
					t.Fatalf("since %q: %d commits, %v", since, len(got), err)
				}
			}
			if got := snapshot(t, gitDir); !reflect.DeepEqual(got, want) {
				for p := range got {
					if got[p] != want[p] {
						t.Errorf("%s changed: %s -> %s", p, want[p], got[p])
					}
				}
				for p := range want {
					if _, ok := got[p]; !ok {
						t.Errorf("%s removed", p)
					}
				}
			}
		})
	}
}

// A GIT_DIR left in the environment (a git hook runs its commands with
// one) does not make Read read another repository.
func TestReadIgnoresGitDir(t *testing.T) {
	s := newSample(t)
	other := newRepo(t)
	other.write("x", "x")
	other.commit(day("2021-01-01"), bob, "other")
	t.Setenv("GIT_DIR", filepath.Join(other.dir, ".git"))
	got, _, err := readCLI(context.Background(), s.dir, "", 1)
	if err != nil || len(got) != 1 || got[0].Hash != s.c["c8"] {
		t.Errorf("got %v, %v; want c8", hashes(got), err)
	}
}

func TestReadCanceled(t *testing.T) {
	s := newSample(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, rd := range readers {
		if _, _, err := rd.read(ctx, s.dir, "", 0); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", rd.name, err)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

// Paths with spaces, newlines, quotes and non-ASCII letters, and
// subjects with control characters, come out as they are, the same from
// both readers.
func TestReadOddNames(t *testing.T) {
	r := newRepo(t)
	names := []string{"sp ace.go", "new\nline.go", "tab\there.go", `quo"te.go`, "é/ü.go", "\x01start.go"}
	for _, n := range names {
		r.write(n, n)
	}
	h := r.commit(day("2021-01-01"), "Zoë \x01 <zoe@example.com>", "subject \x01 with\tcontrol")
	var first []Commit
	for _, rd := range readers {
		got, _, err := rd.read(context.Background(), r.dir, "", 0)
		if err != nil {
			t.Fatalf("%s: %v", rd.name, err)
		}
		if len(got) != 1 || got[0].Hash != h {
			t.Fatalf("%s: %+v", rd.name, got)
		}
		want := slicesSorted(names)
		if !reflect.DeepEqual(got[0].Files, want) {
			t.Errorf("%s: files %q, want %q", rd.name, got[0].Files, want)
		}
		if first == nil {
			first = got
		} else if !reflect.DeepEqual(got, first) {
			t.Errorf("readers differ:\n%+v\n%+v", first, got)
		}
	}
}

func slicesSorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// git refuses a repository owned by another user (unless told it is
// safe); Read then reads it with go-git, which runs nothing the
// repository configures.
func TestReadOtherOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give the repository to another user")
	}
	s := newSample(t)
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, 65534, 65534)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir()) // no safe.directory from the user's config
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	if _, _, err := readCLI(context.Background(), s.dir, "", 0); !errors.Is(err, errCLIRefused) {
		t.Fatalf("git on another user's repository: %v, want errCLIRefused", err)
	}
	got, head, err := Read(context.Background(), s.dir, "", 0)
	if err != nil || head != s.c["c8"] || len(got) != 7 {
		t.Errorf("Read: %d commits, head %s, %v", len(got), head, err)
	}
}

// Settings of the user's git configuration that change what git log
// prints do not change what Read returns.
func TestReadIgnoresUserLogConfig(t *testing.T) {
	s := newSample(t)
	home := t.TempDir()
	cfg := "[log]\n\tshowRoot = false\n\tshowSignature = true\n[diff]\n\trenames = copies\n\trelative = true\n\tignoreSubmodules = all\n[core]\n\tquotePath = true\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	want, _, err := readGoGit(context.Background(), s.dir, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	got, _, err := readCLI(context.Background(), s.dir, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with the user's settings:\n got %+v\nwant %+v", got, want)
	}
}

// Without git on the PATH, Read reads with go-git, and gets the same.
func TestReadWithoutGit(t *testing.T) {
	s := newSample(t)
	want, _, err := readCLI(context.Background(), s.dir, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	if useCLI() {
		t.Fatal("git still found")
	}
	got, head, err := Read(context.Background(), s.dir, "", 0)
	if err != nil || head != s.c["c8"] || !reflect.DeepEqual(got, want) {
		t.Errorf("without git: %v, %s, %v", hashes(got), head, err)
	}
}

// A subject longer than the reader's buffer comes out whole.
func TestReadLongSubject(t *testing.T) {
	r := newRepo(t)
	r.write("a", "a")
	subject := strings.Repeat("long subject ", 10000)
	h := r.commit(day("2021-01-01"), alice, subject)
	for _, rd := range readers {
		got, _, err := rd.read(context.Background(), r.dir, "", 0)
		if err != nil || len(got) != 1 || got[0].Hash != h || got[0].Subject != strings.TrimSpace(subject) {
			t.Errorf("%s: %d commits, %v", rd.name, len(got), err)
		}
	}
}
