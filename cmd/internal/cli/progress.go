package cli

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// progress draws a one-line bar on stderr (only used when stderr is a
// terminal), at most ten times a second.
type progress struct {
	o    *IO
	mu   sync.Mutex
	last time.Time
}

func newProgress(o *IO) *progress { return &progress{o: o} }

func (p *progress) update(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if total <= 0 {
		return
	}
	if done < total && time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	const width = 30
	n := done * width / total
	fmt.Fprintf(p.o.Err, "\r%s: indexing [%s%s] %d/%d", p.o.progName, strings.Repeat("#", n), strings.Repeat(".", width-n), done, total)
	if done >= total {
		fmt.Fprint(p.o.Err, "\r\x1b[K")
	}
}
