package rank

import "sort"

// topK returns the k best of ids, best first, where before(a, b) says a
// ranks before b and orders ids totally. It keeps a heap of the k best seen
// (the worst of them at its root), so that a query with many scored
// documents sorts k of them rather than all. ids is reused.
func topK(ids []uint32, k int, before func(a, b uint32) bool) []uint32 {
	if k <= 0 {
		return ids[:0]
	}
	if len(ids) <= k {
		sort.Slice(ids, func(i, j int) bool { return before(ids[i], ids[j]) })
		return ids
	}
	h := make([]uint32, 0, k)
	// worse(i, j): the heap entry i ranks after j, so the root is the worst.
	worse := func(i, j int) bool { return before(h[j], h[i]) }
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			c := l
			if r := l + 1; r < len(h) && worse(r, l) {
				c = r
			}
			if !worse(c, i) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for _, id := range ids {
		if len(h) < k {
			h = append(h, id)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !worse(i, p) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if before(id, h[0]) {
			h[0] = id
			down(0)
		}
	}
	sort.Slice(h, func(i, j int) bool { return before(h[i], h[j]) })
	return h
}
