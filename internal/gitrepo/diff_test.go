package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiff(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	commit := func(write map[string]string, remove []string, changes ...Change) string {
		t.Helper()
		for _, p := range remove {
			removeFile(t, dir, p)
		}
		for p, c := range write {
			writeFile(t, dir, p, c)
		}
		h, err := r.Commit(changes, "m", testSig)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	c1 := commit(map[string]string{
		".gitignore":                  "x\n",
		"entries/global/facts/a.md":   "a\n",
		"entries/global/facts/b.md":   "b\n",
		"entries/shop/notes/c.md":     "c\n",
		"entries-old/d.md":            "d\n",
		"artifacts/global/blob.txt":   "blob\n",
		"entries/global/goals/g.md":   "g\n",
		"entries/global/goals/g2.md":  "g2\n",
		"entries/zeta/deep/er/e.md":   "e\n",
		"entries/global/facts/b.md~x": "tilde\n",
	}, nil,
		Change{Path: ".gitignore"}, Change{Path: "entries/global/facts/a.md"}, Change{Path: "entries/global/facts/b.md"},
		Change{Path: "entries/shop/notes/c.md"}, Change{Path: "entries-old/d.md"}, Change{Path: "artifacts/global/blob.txt"},
		Change{Path: "entries/global/goals/g.md"}, Change{Path: "entries/global/goals/g2.md"},
		Change{Path: "entries/zeta/deep/er/e.md"}, Change{Path: "entries/global/facts/b.md~x"},
	)
	// c2: modify one file, delete a directory's only file, add a file
	// where a file of the same name turns into a directory.
	c2 := commit(map[string]string{
		"entries/global/facts/a.md":      "a2\n",
		"entries/shop/notes/c.md/new.md": "n\n",
		"artifacts/global/blob.txt":      "blob2\n",
	}, []string{"entries/shop/notes/c.md", "entries/zeta"},
		Change{Path: "entries/global/facts/a.md"},
		Change{Path: "entries/shop/notes/c.md", Delete: true},
		Change{Path: "entries/shop/notes/c.md/new.md"},
		Change{Path: "artifacts/global/blob.txt"},
		Change{Path: "entries/zeta/deep/er/e.md", Delete: true},
	)
	c3 := commit(map[string]string{"entries/global/goals/g.md": "g3\n"}, nil, Change{Path: "entries/global/goals/g.md"})

	tests := []struct {
		name, from, to, prefix string
		want                   []string
	}{
		{"everything in c1", "", c1, "", []string{
			".gitignore", "artifacts/global/blob.txt", "entries-old/d.md", "entries/global/facts/a.md",
			"entries/global/facts/b.md", "entries/global/facts/b.md~x", "entries/global/goals/g.md",
			"entries/global/goals/g2.md", "entries/shop/notes/c.md", "entries/zeta/deep/er/e.md",
		}},
		{"everything in c1 under entries/", "", c1, "entries/", []string{
			"entries/global/facts/a.md", "entries/global/facts/b.md", "entries/global/facts/b.md~x",
			"entries/global/goals/g.md", "entries/global/goals/g2.md", "entries/shop/notes/c.md",
			"entries/zeta/deep/er/e.md",
		}},
		{"c1 to c2", c1, c2, "", []string{
			"artifacts/global/blob.txt", "entries/global/facts/a.md", "entries/shop/notes/c.md",
			"entries/shop/notes/c.md/new.md", "entries/zeta/deep/er/e.md",
		}},
		{"c1 to c2 under entries/", c1, c2, "entries/", []string{
			"entries/global/facts/a.md", "entries/shop/notes/c.md", "entries/shop/notes/c.md/new.md",
			"entries/zeta/deep/er/e.md",
		}},
		{"backwards", c2, c1, "entries/", []string{
			"entries/global/facts/a.md", "entries/shop/notes/c.md", "entries/shop/notes/c.md/new.md",
			"entries/zeta/deep/er/e.md",
		}},
		{"prefix ending inside a name", c1, c2, "entries/global/facts/a", []string{"entries/global/facts/a.md"}},
		{"prefix of a file", c1, c2, "entries/shop/notes/c.md", []string{"entries/shop/notes/c.md", "entries/shop/notes/c.md/new.md"}},
		{"prefix matching nothing", c1, c3, "entries/nowhere/", nil},
		{"c1 to c3 skips c2's intermediate state", c1, c3, "entries/global/", []string{"entries/global/facts/a.md", "entries/global/goals/g.md"}},
		{"same commit", c3, c3, "", nil},
		{"to empty", c3, "", "entries/global/goals/", []string{"entries/global/goals/g.md", "entries/global/goals/g2.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Diff(tt.from, tt.to, tt.prefix)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Diff(%.7s, %.7s, %q) (-want +got):\n%s", tt.from, tt.to, tt.prefix, diff)
			}
			// The git CLI is the reference whenever both ends exist.
			if tt.from != "" && tt.to != "" {
				cli := lines(runGit(t, dir, "diff", "--name-only", "--no-renames", tt.from, tt.to))
				var want []string
				for _, p := range cli {
					if len(p) >= len(tt.prefix) && p[:len(tt.prefix)] == tt.prefix {
						want = append(want, p)
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Diff disagrees with git diff (-git +got):\n%s", diff)
				}
			}
		})
	}

	for _, bad := range [][2]string{{"nothex", c1}, {c1, "0123456789012345678901234567890123456789"}, {c1[:12], c2}} {
		if _, err := r.Diff(bad[0], bad[1], ""); err == nil {
			t.Errorf("Diff(%q, %q) succeeded, want an error", bad[0], bad[1])
		}
	}
}

// TestDiffReadsOnlyChangedSubtrees proves that Diff never opens a subtree
// whose hash is the same on both sides: the untouched subtree's object is
// deleted before the diff, which would fail if it were read.
func TestDiffReadsOnlyChangedSubtrees(t *testing.T) {
	t.Parallel()
	r, dir := newRepo(t)
	writeFile(t, dir, "big/one/a.md", "a\n")
	writeFile(t, dir, "big/two/b.md", "b\n")
	writeFile(t, dir, "small/x.md", "x\n")
	c1, err := r.Commit([]Change{{Path: "big/one/a.md"}, {Path: "big/two/b.md"}, {Path: "small/x.md"}}, "m", testSig)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "small/x.md", "x2\n")
	c2, err := r.Commit([]Change{{Path: "small/x.md"}}, "m", testSig)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.TrimSpace(runGit(t, dir, "rev-parse", c2+":big"))
	if err := os.Remove(filepath.Join(dir, ".git", "objects", big[:2], big[2:])); err != nil {
		t.Fatal(err)
	}
	fresh, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := fresh.Diff(c1, c2, "")
	if err != nil {
		t.Fatalf("Diff read an unchanged subtree: %v", err)
	}
	if diff := cmp.Diff([]string{"small/x.md"}, got); diff != "" {
		t.Errorf("Diff (-want +got):\n%s", diff)
	}
	if _, err := fresh.Diff("", c2, ""); err == nil {
		t.Error("Diff from the empty tree succeeded without the big subtree; the test proves nothing")
	}
}

// TestDiffErrorNamesCommits: a bad end is named; a diff that fails
// inside the trees names both ends, shortened, and an empty end as such.
func TestDiffErrorNamesCommits(t *testing.T) {
	r, dir := newRepo(t)
	if _, err := r.Diff("", "not-a-hash", ""); err == nil || err.Error() != `diff: "not-a-hash" is not a full commit hash` {
		t.Errorf("Diff to a bad hash = %v", err)
	}
	writeFile(t, dir, "a/b.md", "b\n")
	head, err := r.Commit([]Change{{Path: "a/b.md"}}, "one", testSig)
	if err != nil {
		t.Fatal(err)
	}
	sub := strings.TrimSpace(runGit(t, dir, "rev-parse", "HEAD:a"))
	if err := os.Remove(filepath.Join(dir, ".git", "objects", sub[:2], sub[2:])); err != nil {
		t.Fatal(err)
	}
	_, err = r.Diff("", head, "")
	if want := "diff (empty).." + head[:12] + ": "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Diff over a missing tree = %v, want %q…", err, want)
	}
}
