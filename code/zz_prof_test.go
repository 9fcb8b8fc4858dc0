package code

import (
	"context"
	"os"
	"runtime"
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
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("heap %d MiB", ms.HeapAlloc>>20)
	t0 = time.Now()
	s, err := ix.Update(context.Background())
	t.Logf("update %v %+v", time.Since(t0), s)
	t0 = time.Now()
	d, _ := ix.derive()
	t.Logf("derive %v", time.Since(t0))
	t0 = time.Now()
	g := d.graph()
	t.Logf("graph %v edges %d", time.Since(t0), len(g.edges))
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("heap %d MiB", ms.HeapAlloc>>20)
}
