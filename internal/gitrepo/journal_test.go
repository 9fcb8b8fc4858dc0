package gitrepo

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// treeDiff is Diff without the journal.
func treeDiff(t *testing.T, r *Repo, from, to, prefix string) []string {
	t.Helper()
	a, err := r.commitTree(from)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.commitTree(to)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := r.changedPaths(a, b, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// TestJournalDiffMatchesTrees makes random commits (writes, rewrites with
// the same content, deletions of files, of directories and of paths that
// never existed, files turned into directories) and checks that Diff
// between any two of them answers what the trees' diff answers (or, over
// several commits, also paths changed and changed back), and that
// the journal answered the ones it could.
func TestJournalDiffMatchesTrees(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	rnd := rand.New(rand.NewPCG(1, 2))
	names := []string{"entries/a/x.md", "entries/a/y.md", "entries/b/z.md", "entries/b/c/w.md", "other/o.md", "entries/a"}
	var commits []string
	for i := range 40 {
		var chs []Change
		for range 1 + rnd.IntN(3) {
			p := names[rnd.IntN(len(names))]
			switch rnd.IntN(4) {
			case 0:
				os.RemoveAll(filepath.Join(dir, p))
				chs = append(chs, Change{Path: p, Delete: true})
			case 1:
				if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
					chs = append(chs, Change{Path: p}) // the same content again
					continue
				}
				fallthrough
			default:
				abs := filepath.Join(dir, p)
				if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
					os.RemoveAll(abs)
					chs = append(chs, Change{Path: p, Delete: true})
				}
				os.MkdirAll(filepath.Dir(abs), 0o755)
				if fi, err := os.Stat(filepath.Dir(abs)); err != nil || !fi.IsDir() {
					continue
				}
				if err := os.WriteFile(abs, []byte(fmt.Sprint(i, rnd.IntN(2))), 0o644); err != nil {
					continue
				}
				chs = append(chs, Change{Path: p})
			}
		}
		h, err := r.Commit(chs, "m", testSig)
		if err != nil {
			continue // nothing to commit, or conflicting changes
		}
		commits = append(commits, h)
	}
	if len(commits) < 20 {
		t.Fatalf("only %d commits", len(commits))
	}
	answered := 0
	for i := range commits {
		for j := i; j < len(commits); j++ {
			for _, prefix := range []string{"", "entries/"} {
				got, err := r.Diff(commits[i], commits[j], prefix)
				if err != nil {
					t.Fatal(err)
				}
				want := treeDiff(t, r, commits[i], commits[j], prefix)
				if j <= i+1 && !cmp.Equal(want, got) {
					t.Fatalf("Diff(%d, %d, %q) (-trees +got):\n%s", i, j, prefix, cmp.Diff(want, got))
				}
				// Across several commits a path changed and changed back
				// may be reported too: never one no commit between changed.
				steps := map[string]bool{}
				for k := i; k < j; k++ {
					for _, p := range treeDiff(t, r, commits[k], commits[k+1], prefix) {
						steps[p] = true
					}
				}
				have := map[string]bool{}
				for _, p := range got {
					have[p] = true
					if !steps[p] {
						t.Fatalf("Diff(%d, %d, %q) reports %s, which no commit between changed", i, j, prefix, p)
					}
				}
				for _, p := range want {
					if !have[p] {
						t.Fatalf("Diff(%d, %d, %q) misses %s", i, j, prefix, p)
					}
				}
				if _, ok := r.journalDiff(commits[i], commits[j], prefix); ok {
					answered++
				}
			}
		}
	}
	if answered == 0 {
		t.Fatal("the journal answered no Diff")
	}
	// The journal is no part of what git sees: status and fsck stay
	// clean, and git log walks the same commits.
	if _, err := os.Stat(filepath.Join(r.gitDir, journalName)); err != nil {
		t.Fatalf("no journal: %v", err)
	}
	assertClean(t, dir)
	if got := lines(runGit(t, dir, "log", "--format=%H")); len(got) != len(commits) || got[0] != commits[len(commits)-1] {
		t.Errorf("git log lists %d commits, want %d ending at %s", len(got), len(commits), commits[len(commits)-1])
	}
}

// TestJournalDamaged checks that a line whose CRC does not match is not
// believed: a lying line sends Diff back to the trees.
func TestJournalDamaged(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	var commits []string
	for i := range 3 {
		writeFile(t, dir, "entries/a.md", fmt.Sprint(i))
		h, err := r.Commit([]Change{{Path: "entries/a.md"}}, "m", testSig)
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, h)
	}
	name := filepath.Join(r.gitDir, journalName)
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.journalDiff(commits[0], commits[2], ""); !ok {
		t.Fatal("the journal does not lead back")
	}
	// The path of the last line changed, its CRC not: a different
	// answer that must not be taken.
	lied := strings.Replace(string(b), `"entries/a.md" `, `"entries/b.md" `, -1)
	if err := os.WriteFile(name, []byte(lied), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.journalDiff(commits[0], commits[2], ""); ok {
		t.Fatal("a line with a wrong CRC was believed")
	}
	got, err := r.Diff(commits[0], commits[2], "")
	if err != nil || !cmp.Equal(got, []string{"entries/a.md"}) {
		t.Fatalf("Diff = %v, %v", got, err)
	}
	// A torn last line (no newline) is ignored; the lines before it stand.
	if err := os.WriteFile(name, append(b[:len(b)-1:len(b)-1], b[:20]...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.journalDiff(commits[0], commits[1], ""); !ok {
		t.Fatal("the whole lines before a torn one were not read")
	}
	if _, ok := r.journalDiff(commits[1], commits[2], ""); ok {
		t.Fatal("a torn line was believed")
	}
}

// TestJournalCut checks that a journal past journalMax is cut back to its
// newest lines, which still answer.
func TestJournalCut(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	name := filepath.Join(r.gitDir, journalName)
	writeFile(t, dir, "entries/a.md", "0")
	first, err := r.Commit([]Change{{Path: "entries/a.md"}}, "m", testSig)
	if err != nil {
		t.Fatal(err)
	}
	// Pad the journal up to its limit with lines of no commit.
	pad := strings.Repeat("x", 1000) + "\n"
	if err := os.WriteFile(name, []byte(strings.Repeat(pad, journalMax/len(pad)+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	var commits []string
	for i := range 2 {
		writeFile(t, dir, "entries/a.md", fmt.Sprint(i+1))
		h, err := r.Commit([]Change{{Path: "entries/a.md"}}, "m", testSig)
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, h)
	}
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > journalTail+4096 {
		t.Fatalf("journal of %d bytes not cut", fi.Size())
	}
	if _, ok := r.journalDiff(first, commits[1], ""); !ok {
		t.Fatal("the newest lines were not kept")
	}
}

// TestTreeFromCacheFindsSubtrees: a tree read from the process's cache or
// from a loose file (not through go-git's storage) still reads its
// subtrees, as repairIndex's FindEntry needs: decoded without the storage
// it panicked on the first nested path.
func TestTreeFromCacheFindsSubtrees(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	// A root tree large enough for the cache (treeCacheMin).
	chs := []Change{{Path: "entries/a/x.md"}}
	writeFile(t, dir, "entries/a/x.md", "x\n")
	for i := range treeCacheMin / 30 {
		p := fmt.Sprintf("root-file-%05d.md", i)
		writeFile(t, dir, p, "r\n")
		chs = append(chs, Change{Path: p})
	}
	first, err := r.Commit(chs, "m", testSig)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "entries/a/y.md", "y\n")
	second, err := r.Commit([]Change{{Path: "entries/a/y.md"}}, "m", testSig)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(r.gitDir, journalName))
	if _, err := r.Diff(first, second, ""); err != nil { // caches the trees
		t.Fatal(err)
	}
	root, err := r.commitTree(second)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := r.tree(root)
	if err != nil {
		t.Fatal(err)
	}
	e, err := tr.FindEntry("entries/a/y.md")
	if err != nil || e.Name != "y.md" {
		t.Fatalf("FindEntry = %v, %v", e, err)
	}
}
