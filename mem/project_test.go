package mem

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDetectProject(t *testing.T) {
	root := t.TempDir()
	mk := func(p, content string) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("repo/.git/HEAD", "ref: refs/heads/main\n")
	mk("repo/svc/go.mod", "module x\n")
	mk("repo/named/.mira/project.yaml", "name: shop\n")
	mk("repo/named/deep/x.txt", "")
	mk("loose/pkg/package.json", "{}")
	mk("loose/pkg/src/a.js", "")
	mk("bare/dir/f", "")
	tests := []struct {
		dir, env, want, by string
	}{
		{"repo/named/deep", "", "shop", ".mira/project.yaml"},
		{"repo/svc", "", "repo", "git"}, // the git root wins over a nearer go.mod
		{"loose/pkg/src", "", "pkg", "package.json"},
		{"bare/dir", "", "dir", "cwd"},
		{"repo/svc", "override", "override", "env"},
	}
	for _, tt := range tests {
		got := DetectProject(filepath.Join(root, tt.dir), tt.env)
		if got.Name != tt.want || got.By != tt.by {
			t.Errorf("DetectProject(%s, %q) = %s by %s, want %s by %s", tt.dir, tt.env, got.Name, got.By, tt.want, tt.by)
		}
	}
}
