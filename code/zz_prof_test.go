package code

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestZZProf(t *testing.T) {
	root := os.Getenv("ZZROOT")
	if root == "" {
		t.Skip()
	}
	t0 := time.Now()
	ix, err := Open(context.Background(), Options{Root: root, Dir: "/tmp/mb/index", Warn: func(p string, err error) { t.Log(p, err) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("open %v", time.Since(t0))
	t0 = time.Now()
	s, err := ix.Update(context.Background())
	t.Logf("update %v %+v", time.Since(t0), s)
	for i := range 3 {
		os.WriteFile(filepath.Join(root, "strings", "zz.go"), []byte("package strings\n\nfunc ZZ"+string(rune('a'+i))+"() {}\n"), 0o644)
		t0 = time.Now()
		s, err = ix.Update(context.Background())
		t.Logf("update1 %v %+v", time.Since(t0), s)
		t0 = time.Now()
		_, err = ix.Card("ZZ"+string(rune('a'+i)), false)
		t.Logf("card %v %v", time.Since(t0), err)
		t0 = time.Now()
		tp := ix.Touchpoints(Query{Text: "parse a duration string"})
		t.Logf("touch %v %d", time.Since(t0), len(tp))
		t0 = time.Now()
		tp = ix.Touchpoints(Query{Text: "parse a duration string"})
		t.Logf("touch warm %v %d", time.Since(t0), len(tp))
	}
}
