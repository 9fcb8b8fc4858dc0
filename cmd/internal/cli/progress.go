package cli

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// progress draws a one-line bar on stderr (only used when stderr is a
// terminal) for long index work, at most ten times a second, and clears
// it when the work is done.
//
// One command may open the index many times (the agent does for every
// message: the standing context, the recall for the message, its tools),
// and each open that takes in a few new files reports them. A bar for
// those would flash once per open; so the bar is drawn only once an
// operation has lasted progressDelay, and an operation that ends sooner
// draws nothing.
type progress struct {
	o     *IO
	now   func() time.Time
	mu    sync.Mutex
	start time.Time // when the current operation began; zero: none
	last  time.Time // when the bar was last drawn; zero: not shown
}

// progressDelay is how long an operation runs before its bar appears.
const progressDelay = 300 * time.Millisecond

func newProgress(o *IO) *progress { return &progress{o: o, now: time.Now} }

func (p *progress) update(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if total <= 0 {
		return
	}
	now := p.now()
	if done >= total {
		p.clearLocked()
		p.start = time.Time{}
		return
	}
	if p.start.IsZero() {
		p.start = now
	}
	if now.Sub(p.start) < progressDelay || (!p.last.IsZero() && now.Sub(p.last) < 100*time.Millisecond) {
		return
	}
	p.last = now
	const width = 30
	n := done * width / total
	fmt.Fprintf(p.o.Err, "\r%s: indexing [%s%s] %d/%d", p.o.progName, strings.Repeat("#", n), strings.Repeat(".", width-n), done, total)
}

// clear removes the bar if it is shown; the command calls it when it
// ends, in case the work it showed ended without saying so (an error).
func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearLocked()
	p.start = time.Time{}
}

func (p *progress) clearLocked() {
	if !p.last.IsZero() {
		fmt.Fprint(p.o.Err, "\r\x1b[K")
		p.last = time.Time{}
	}
}
