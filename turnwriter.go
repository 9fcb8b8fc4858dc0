package mira

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miramem/mira/mem"
)

// TurnOptions are AppendTurns's options: the commit's source, subject,
// trailers and the artifacts that go with the turns. The type lives in
// mem so that agentloop can declare the writer it needs without
// importing this package.
type TurnOptions = mem.TurnOptions

// AppendTurns stores conversation turns (entries of kind turn with a role
// and a scope) in one commit, and returns it. Unlike Remember it keeps
// repeated text: a user who says "yes" twice said it twice. Each entry is
// checked as Remember checks it, the secret scan included, and the batch
// is all or nothing. Entries keep the id and creation time they carry
// (TurnWriter stamps them as they arrive), or get them here; each gets
// its Path.
func (m *Memory) AppendTurns(ctx context.Context, entries []*mem.Entry, opt TurnOptions) (string, error) {
	if len(entries) == 0 {
		return "", invalidf("no turns to store")
	}
	for _, e := range entries {
		if err := checkTurn(e, m.opt.Project, m.cfg.Remember.MaxBytes); err != nil {
			return "", err
		}
	}
	// The store's lock file alone, not writeMu: a Summarize of this
	// process holds writeMu while its model writes, and a turn must not
	// wait for that. lockFile queues the commits themselves.
	unlock, err := m.lockFile(context.WithoutCancel(ctx))
	if err != nil {
		return "", err
	}
	defer unlock()
	tx := m.st.Begin(false)
	scopes := map[string]bool{}
	for _, e := range entries {
		if err := tx.Add(e); err != nil {
			tx.Rollback()
			return "", err
		}
		scopes[e.Scope] = true
	}
	for _, rel := range opt.Artifacts {
		var err error
		if !strings.HasPrefix(rel, "artifacts/") || path.Clean(rel) != rel {
			err = errors.New("not in the store's artifacts") // read nothing outside
		} else if err = inStore(m.st.Root, rel); err == nil {
			// Committed as written, never read whole: an artifact may
			// hold hundreds of megabytes of output.
			err = tx.AddWritten(rel)
		}
		if err != nil {
			tx.Rollback()
			return "", fmt.Errorf("artifact %s: %w", rel, err)
		}
	}
	subject := turnsSubject(entries, len(scopes))
	if opt.Subject != nil {
		subject = opt.Subject(entries)
	}
	trailers := append([]mem.Trailer{{Key: "Mira-Source", Value: cmp.Or(opt.Source, "api")}}, opt.Trailers...)
	return tx.Commit(subject, trailers...)
}

// inStore checks that the file at rel under root is in the store: not a
// symbolic link, nor under one, since a link planted in the store would
// bring a file from outside it into the commit.
func inStore(root, rel string) error {
	name := filepath.Join(root, filepath.FromSlash(rel))
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return err
	}
	if realRoot, err := filepath.EvalSymlinks(root); err != nil || real != filepath.Join(realRoot, filepath.FromSlash(rel)) {
		return errors.New("a symbolic link: only files in the store are committed")
	}
	return nil
}

// turnsSubject is the commit subject of stored turns, e.g.
// `turns: 1 user turn in conversation alice "What do I…"` or
// `turns: 12 turns in 5 conversations`.
func turnsSubject(entries []*mem.Entry, scopes int) string {
	if len(entries) == 1 {
		e := entries[0]
		return fmt.Sprintf("turns: 1 %s turn in conversation %s %q", e.Role, e.Scope, firstWords(e.Body, 60))
	}
	if scopes == 1 {
		return fmt.Sprintf("turns: %d turns in conversation %s", len(entries), entries[0].Scope)
	}
	return fmt.Sprintf("turns: %d turns in %d conversations", len(entries), scopes)
}

// checkTurn fills a turn's defaults and refuses what Remember refuses.
func checkTurn(e *mem.Entry, project string, maxBytes int) error {
	if e.Kind == "" {
		e.Kind = mem.KindTurn
	}
	if e.Kind != mem.KindTurn {
		return invalidf("%s is not a turn", e.Kind)
	}
	if e.Role == "" {
		return invalidField("role", errors.New("a turn needs a role"))
	}
	// A turn keeps its text as said, the indentation of a tool's output
	// included: only the newlines an entry file cannot hold around its
	// text go.
	body := strings.TrimRight(strings.TrimPrefix(e.Body, "\n"), "\n")
	if err := prepare(e, RememberOptions{MaxBytes: maxBytes}, project); err != nil {
		return err
	}
	e.Body = body
	return nil
}

// TurnWriterOptions tune a TurnWriter.
type TurnWriterOptions struct {
	// Delay is how long the first turn of a batch waits for others before
	// the batch is committed (default 300 ms). A turn is committed within
	// about Delay plus one commit.
	Delay time.Duration
	// MaxBatch is the most turns in one commit (default 500).
	MaxBatch int
	// Source is the commit's Mira-Source trailer.
	Source string
	// Committed, when set, is told of each batch once it is committed, in
	// the writer's goroutine.
	Committed func([]*mem.Entry)
	// Failed, when set, is told of each failed commit; the batch is tried
	// again (Retries times in all, a second apart) and then given up.
	Failed func(batch []*mem.Entry, err error, final bool)
	// Retries is the number of attempts at one batch (default 5).
	Retries int
	// Backlog bounds the turns Room lets pile up: as many as the writer,
	// at the pace its commits have been going, commits in this time
	// (default 1 s; never fewer than 32).
	Backlog time.Duration
}

// TurnWriter stores the turns of a busy server: turns added from many
// goroutines are collected and committed together by AppendTurns, so that
// fifty conversations make a commit or two a second instead of one a
// turn, and each turn is still committed within a fraction of a second.
// Add checks a turn at once, so a refused one is known to the caller.
type TurnWriter struct {
	m   *Memory
	opt TurnWriterOptions

	mu        sync.Mutex
	queue     []*mem.Entry
	added     uint64 // turns accepted by Add
	settled   uint64 // turns committed or given up
	progress  chan struct{}
	kick      chan struct{}
	closing   bool
	done      chan struct{}
	lastStamp time.Time
	rate      float64 // turns committed per second of commit, a moving average
}

// minRoom is the fewest turns Room lets wait.
const minRoom = 32

// NewTurnWriter starts a TurnWriter. Close it to commit what is left.
func (m *Memory) NewTurnWriter(opt TurnWriterOptions) *TurnWriter {
	opt.Delay = cmp.Or(opt.Delay, 300*time.Millisecond)
	opt.MaxBatch = cmp.Or(opt.MaxBatch, 500)
	opt.Retries = cmp.Or(opt.Retries, 5)
	opt.Backlog = cmp.Or(opt.Backlog, time.Second)
	w := &TurnWriter{m: m, opt: opt, progress: make(chan struct{}), kick: make(chan struct{}, 1), done: make(chan struct{})}
	go w.loop()
	return w
}

// ErrWriterClosed is returned by Add after Close.
var ErrWriterClosed = errors.New("the turn writer is closed")

// Add checks a turn and queues it. The turn gets its id and creation time
// now, so turns keep the order they were added in. A turn refused (a
// secret, a missing role, too long) is an *InvalidError and is not queued.
func (w *TurnWriter) Add(e *mem.Entry) error {
	if err := checkTurn(e, w.m.opt.Project, w.m.cfg.Remember.MaxBytes); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closing {
		return ErrWriterClosed
	}
	// Entries are ordered by creation time (whole seconds) and then id;
	// the stamp never goes back, so a clock stepped back keeps the order.
	now := w.m.st.Now()
	t := now.UTC().Truncate(time.Second)
	if t.Before(w.lastStamp) {
		t = w.lastStamp
	}
	w.lastStamp = t
	e.CreatedAt = t
	e.ID = w.m.st.NewID(now)
	w.queue = append(w.queue, e)
	w.added++
	select {
	case w.kick <- struct{}{}:
	default:
	}
	return nil
}

// Flush waits until every turn added before it is committed or given up.
func (w *TurnWriter) Flush(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	target := w.added
	for w.settled < target {
		if err := w.awaitLocked(ctx); err != nil {
			return err
		}
		if w.settled < target && isDone(w.done) {
			return fmt.Errorf("%d turns were not stored", target-w.settled)
		}
	}
	return nil
}

// awaitLocked waits for the writer's next progress, the end of ctx, or
// the writer's end, and returns ctx's error if that came first. The
// caller holds mu; it is let go while waiting and held again on return.
func (w *TurnWriter) awaitLocked(ctx context.Context) error {
	ch := w.progress
	w.mu.Unlock()
	defer w.mu.Lock()
	select {
	case <-ch:
	case <-ctx.Done():
		return ctx.Err()
	case <-w.done:
	}
	return nil
}

// Pending is the number of turns added and not yet committed or given up.
func (w *TurnWriter) Pending() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return int(w.added - w.settled)
}

// Room waits while more turns are pending than the writer commits in
// Backlog at its measured pace: a server that answers faster than its
// turns are committed answers more slowly instead of holding more turns
// (in memory, and lost to a kill -9) than about Backlog's worth. It
// returns early when ctx ends or the writer closes.
func (w *TurnWriter) Room(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for int(w.added-w.settled) > w.roomLocked() && !w.closing {
		if err := w.awaitLocked(ctx); err != nil {
			return err
		}
		if isDone(w.done) {
			return nil
		}
	}
	return nil
}

// roomLocked is the most turns Room lets wait; the caller holds mu.
func (w *TurnWriter) roomLocked() int {
	return max(minRoom, int(w.rate*w.opt.Backlog.Seconds()))
}

// Close refuses further turns, commits those queued and stops. When ctx
// ends first, the turns still queued are not stored and Close says how
// many.
func (w *TurnWriter) Close(ctx context.Context) error {
	w.mu.Lock()
	w.closing = true
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
	err := w.Flush(ctx)
	w.mu.Lock()
	if !isDone(w.done) {
		w.queue = nil // the loop stops at its next look
	}
	w.mu.Unlock()
	return err
}

// loop commits batches until the writer is closed and empty.
func (w *TurnWriter) loop() {
	defer close(w.done)
	for {
		w.mu.Lock()
		for len(w.queue) == 0 {
			if w.closing {
				w.mu.Unlock()
				return
			}
			w.mu.Unlock()
			<-w.kick
			w.mu.Lock()
		}
		closing := w.closing
		w.mu.Unlock()
		if !closing {
			// Let the turns arriving meanwhile join this batch.
			t := time.NewTimer(w.opt.Delay)
		wait:
			for {
				select {
				case <-t.C:
					break wait
				case <-w.kick:
					w.mu.Lock()
					full := len(w.queue) >= w.opt.MaxBatch || w.closing
					w.mu.Unlock()
					if full {
						t.Stop()
						break wait
					}
				}
			}
		}
		w.mu.Lock()
		n := min(len(w.queue), w.opt.MaxBatch)
		batch := slices.Clone(w.queue[:n])
		w.queue = w.queue[n:]
		w.mu.Unlock()
		var took time.Duration
		if len(batch) > 0 {
			start := time.Now()
			w.commit(batch)
			took = time.Since(start)
		}
		w.mu.Lock()
		if took > 0 {
			r := float64(len(batch)) / took.Seconds()
			if w.rate == 0 {
				w.rate = r
			} else {
				w.rate = 0.7*w.rate + 0.3*r
			}
		}
		w.settled += uint64(len(batch))
		close(w.progress)
		w.progress = make(chan struct{})
		w.mu.Unlock()
	}
}

// commit stores one batch, trying again a second later when it fails.
func (w *TurnWriter) commit(batch []*mem.Entry) {
	for attempt := 1; ; attempt++ {
		_, err := w.m.AppendTurns(context.Background(), batch, TurnOptions{Source: w.opt.Source})
		if err == nil {
			if w.opt.Committed != nil {
				w.opt.Committed(batch)
			}
			return
		}
		var inv *InvalidError
		final := attempt >= w.opt.Retries || errors.As(err, &inv)
		if w.opt.Failed != nil {
			w.opt.Failed(batch, err, final)
		}
		if final {
			return
		}
		time.Sleep(time.Second)
		for _, e := range batch {
			e.Path = "" // planned again on the next attempt
		}
	}
}

// isDone reports whether ch is closed.
func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
