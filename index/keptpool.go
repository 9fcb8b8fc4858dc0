package index

import "sync"

// keptPool keeps up to keptMax values for reuse, like a sync.Pool that
// the collector does not empty. A text search's scratch at a million
// entries is some 15 MB of arrays by row: in a sync.Pool, emptied by every
// collection, a server made them again every few recalls, and the
// garbage they made brought the next collection closer (a served recall
// spent a third of a second collecting and growing slices). What it keeps
// is bounded: keptMax of each, no more than searches run at once.
type keptPool[T any] struct {
	mu   sync.Mutex
	free []*T
}

// keptMax is how many values a keptPool keeps.
const keptMax = 4

func (p *keptPool[T]) get() *T {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		x := p.free[n-1]
		p.free = p.free[:n-1]
		return x
	}
	return new(T)
}

func (p *keptPool[T]) put(x *T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free) < keptMax {
		p.free = append(p.free, x)
	}
}
