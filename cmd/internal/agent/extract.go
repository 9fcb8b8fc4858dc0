package agent

import (
	"context"
	"sync"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/mem"
)

// agentExtractDrain bounds how long a session that ends (end of input,
// /quit, a one-shot message answered) waits for the extraction still due.
const agentExtractDrain = 30 * time.Second

// agentExtractor takes facts from the conversation's user turns after each
// message, in the background, as mira-proxy does after each call: through
// mira.Memory.Extract on the conversation's unread user turns (those
// without extracted_at), with the same reconciliation against the
// conversation's memories and the same rules (one commit per round,
// nothing written when the model fails, no fact lost to a failed or
// delete-only answer). A turn whose round fails, is cut short or never
// runs stays unread: the next round, the next session's first one, or a
// mira-remember --extract --scope from cron takes it.
type agentExtractor struct {
	m     *mira.Memory
	chat  *llm.Client // a client of its own: each commit records what its round cost
	scope string
	warnf func(format string, args ...any)

	ctx    context.Context // the rounds'; cancelled by close when its wait ends
	cancel context.CancelFunc

	mu sync.Mutex
	// also are the scopes the agent's remember tool writes to (global,
	// the project's): facts are reconciled with their memories too, so
	// that one the model remembered is not stored a second time.
	also    []string
	due     bool          // a round is asked for
	running bool          // the loop goroutine is at work
	idle    chan struct{} // closed when the loop goroutine has nothing left to do
}

func newAgentExtractor(m *mira.Memory, chat *llm.Client, scope string, warnf func(string, ...any)) *agentExtractor {
	x := &agentExtractor{m: m, chat: chat, scope: scope, warnf: warnf}
	x.ctx, x.cancel = context.WithCancel(context.Background())
	return x
}

// kick asks for a round: at once if none is running, else after the one
// under way. It never waits.
func (x *agentExtractor) kick() {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.due = true
	if x.running || x.ctx.Err() != nil {
		return
	}
	x.running = true
	x.idle = make(chan struct{})
	go x.loop(x.idle)
}

// loop runs rounds while they are asked for, and while a round leaves
// turns for the next.
func (x *agentExtractor) loop(idle chan struct{}) {
	defer close(idle)
	for {
		x.mu.Lock()
		if !x.due || x.ctx.Err() != nil {
			x.running = false
			x.mu.Unlock()
			return
		}
		x.due = false
		x.mu.Unlock()
		if x.round() {
			x.mu.Lock()
			x.due = true
			x.mu.Unlock()
		}
	}
}

// round extracts from the conversation's unread user turns and reports
// whether some are left for another round.
func (x *agentExtractor) round() (more bool) {
	x.mu.Lock()
	also := x.also
	x.mu.Unlock()
	res, err := x.m.Extract(x.ctx, mira.ExtractRequest{Scope: x.scope, AlsoScopes: also, Chat: x.chat, Source: "conversation " + x.scope})
	if err != nil {
		if x.ctx.Err() == nil {
			x.warnf("warning: conversation %s: facts not extracted (tried again after the next message): %v", x.scope, err)
		}
		return false
	}
	return res.Left > 0
}

// pending reports whether a round is running or due.
func (x *agentExtractor) pending() bool {
	if x == nil {
		return false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.running || x.due
}

// close lets the rounds due finish until ctx ends, then cancels the one
// under way and starts no other: its turns stay unread for a later run.
// It reports whether everything due was done.
func (x *agentExtractor) close(ctx context.Context) bool {
	if x == nil {
		return true
	}
	x.mu.Lock()
	idle, running := x.idle, x.running
	x.mu.Unlock()
	done := true
	if running {
		select {
		case <-idle:
		case <-ctx.Done():
			done = false
		}
	}
	x.mu.Lock()
	x.cancel()
	idle, running = x.idle, x.running
	x.mu.Unlock()
	if running {
		<-idle // a cancelled round returns at once, writing nothing
	}
	return done
}

// setProject makes the rounds reconcile with the scopes the remember tool
// writes to in project p (agentLibrary.scopeFor).
func (x *agentExtractor) setProject(p mem.Project) {
	if x == nil {
		return
	}
	l := agentLibrary{project: p}
	also := []string{mem.DefaultScope}
	if sc := l.scopeFor(mem.KindFact); sc != mem.DefaultScope {
		also = append(also, sc)
	}
	x.mu.Lock()
	x.also = also
	x.mu.Unlock()
}
