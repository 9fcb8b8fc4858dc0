package code

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file indexed as a regular file and then replaced by a symbolic link
// must not make a card show what the link points to (a key outside the
// project, say).
func TestSnippetNotReadThroughSymlink(t *testing.T) {
	root := project(t)
	ix := open(t, root, t.TempDir(), nil)
	update(t, ix)
	secret := filepath.Join(t.TempDir(), "id_key")
	if err := os.WriteFile(secret, []byte(strings.Repeat("SECRET-KEY-MATERIAL\n", 40)), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "util", "util.go")
	os.Remove(p)
	if err := os.Symlink(secret, p); err != nil {
		t.Skip("no symbolic links:", err)
	}
	c, err := ix.Card("Greet", true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.Snippet, "SECRET") || !c.Stale {
		t.Errorf("card read through a symbolic link: %+v", c)
	}
	for _, tp := range ix.Touchpoints(Query{Text: "greet name"}) {
		if strings.Contains(tp.Excerpt, "SECRET") || strings.Contains(tp.Snippet, "SECRET") {
			t.Errorf("touchpoint read through a symbolic link: %+v", tp)
		}
	}
	// The walk does not follow it either, and counts it.
	update(t, ix)
	if _, err := ix.Card("Greet", false); err == nil {
		t.Errorf("a symbolic link was indexed")
	}
	if n := ix.Status().Skipped[skipSymlink]; n != 1 {
		t.Errorf("skipped %v, want one symbolic link", ix.Status().Skipped)
	}
}
