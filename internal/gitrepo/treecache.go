package gitrepo

import (
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// trees keeps the encoded content of the trees this process wrote or read
// last, for every Repo in it: an object's hash names its content, so the
// cache needs no key but the hash. A store's entry directories hold
// thousands of files each, and each commit writes a new tree for the
// directory it adds to, which the diffs after it (a writer's duplicate
// check, a watcher's update) read back, inflate and walk: at 100,000
// entries four reads of 1.5 MB trees per remember, a sixth of a server's
// time. Those reads want the last two or three trees written, so the cache
// is small (it stays with a server for its life): it holds up to
// treeCacheMax bytes and forgets the oldest first.
var trees struct {
	sync.Mutex
	byHash map[plumbing.Hash][]byte
	order  []plumbing.Hash // oldest first
	size   int
}

// treeCacheMax bounds the bytes the tree cache holds; treeCacheMin is the
// size of the smallest tree worth keeping (a small one is read at once).
const (
	treeCacheMax = 8 << 20
	treeCacheMin = 16 << 10
)

// cachedTree returns the encoded tree h, if the cache has it. The caller
// must not change it.
func cachedTree(h plumbing.Hash) ([]byte, bool) {
	trees.Lock()
	defer trees.Unlock()
	b, ok := trees.byHash[h]
	return b, ok
}

// cacheTree keeps the encoded tree h, which must not change afterwards.
func cacheTree(h plumbing.Hash, data []byte) {
	if len(data) < treeCacheMin || len(data) > treeCacheMax/2 {
		return
	}
	trees.Lock()
	defer trees.Unlock()
	if _, ok := trees.byHash[h]; ok {
		return
	}
	if trees.byHash == nil {
		trees.byHash = make(map[plumbing.Hash][]byte)
	}
	for trees.size+len(data) > treeCacheMax && len(trees.order) > 0 {
		old := trees.order[0]
		trees.order = trees.order[1:]
		trees.size -= len(trees.byHash[old])
		delete(trees.byHash, old)
	}
	trees.byHash[h] = data
	trees.order = append(trees.order, h)
	trees.size += len(data)
}

// ForgetTrees empties the tree cache: a server calls it once it has
// written nothing for a while.
func ForgetTrees() {
	trees.Lock()
	defer trees.Unlock()
	trees.byHash, trees.order, trees.size = nil, nil, 0
}
