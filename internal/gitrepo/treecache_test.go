package gitrepo

import (
	"bytes"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestTreeCache: trees are kept by hash up to the cache's bound, the
// oldest forgotten first; small and huge ones are not kept.
func TestTreeCache(t *testing.T) {
	trees.Lock()
	trees.byHash, trees.order, trees.size = nil, nil, 0
	trees.Unlock()
	t.Cleanup(func() {
		trees.Lock()
		trees.byHash, trees.order, trees.size = nil, nil, 0
		trees.Unlock()
	})
	tree := func(i, size int) (plumbing.Hash, []byte) {
		b := bytes.Repeat([]byte{byte(i)}, size)
		return plumbing.ComputeHash(plumbing.TreeObject, b), b
	}
	small, sb := tree(1, treeCacheMin-1)
	cacheTree(small, sb)
	huge, hb := tree(2, treeCacheMax/2+1)
	cacheTree(huge, hb)
	if _, ok := cachedTree(small); ok {
		t.Error("a tree under the minimum was kept")
	}
	if _, ok := cachedTree(huge); ok {
		t.Error("a tree over half the bound was kept")
	}
	const size = treeCacheMax / 8
	var hs []plumbing.Hash
	for i := range 10 {
		h, b := tree(10+i, size)
		cacheTree(h, b)
		hs = append(hs, h)
		if got, ok := cachedTree(h); !ok || !bytes.Equal(got, b) {
			t.Fatalf("tree %d not kept as written", i)
		}
	}
	for i, h := range hs {
		_, ok := cachedTree(h)
		if want := i >= 2; ok != want {
			t.Errorf("tree %d of 10 kept: %v, want %v (8 fit)", i, ok, want)
		}
	}
	if trees.size > treeCacheMax {
		t.Errorf("the cache holds %d bytes, more than its bound %d", trees.size, treeCacheMax)
	}
}
