package tools

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWithinSharesNoPrefix: a directory beside the project whose name
// starts with the project's (/x/proj-evil beside /x/proj) is outside it.
func TestWithinSharesNoPrefix(t *testing.T) {
	for _, tc := range []struct {
		p, dir string
		want   bool
	}{
		{"/x/proj", "/x/proj", true},
		{"/x/proj/a.go", "/x/proj", true},
		{"/x/proj-evil", "/x/proj", false},
		{"/x/proj-evil/a.go", "/x/proj", false},
		{"/x/projects/a.go", "/x/proj", false},
		{"/x", "/x/proj", false},
		{"/x/proj/a", "/x/proj/", true},
		{"/", "/", true},
		{"/etc/passwd", "/", true},
	} {
		if got := within(tc.p, tc.dir); got != tc.want {
			t.Errorf("within(%q, %q) = %v, want %v", tc.p, tc.dir, got, tc.want)
		}
	}
	base := t.TempDir()
	proj, evil := filepath.Join(base, "proj"), filepath.Join(base, "proj-evil")
	os.Mkdir(proj, 0o755)
	os.Mkdir(evil, 0o755)
	w, err := newWorkspace(proj, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.inside(filepath.Join(evil, "x.txt")) {
		t.Errorf("a file of %s counts as inside %s", evil, proj)
	}
	if !w.inside(filepath.Join(proj, "x.txt")) {
		t.Errorf("a file of the project counts as outside")
	}
}
