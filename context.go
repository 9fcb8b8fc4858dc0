package mira

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/mem"
	"github.com/miramem/mira/summarize"
)

// ContextRequest is what a Context plans.
type ContextRequest struct {
	// Items are the candidates (recalled records, plain text).
	Items []plan.Item
	// Mode is off, light or heavy; empty means the configuration's
	// context.mode, else light.
	Mode string
	// Budget is the token budget of the whole block; zero means the
	// mode's (from the configuration, else built in).
	Budget int
	// Query is the question the context is for; shown in the block and
	// part of the plan id.
	Query string
	// Encoding is the tokenizer (o200k_base or cl100k_base); empty means
	// the configuration's context.encoding, else o200k_base.
	Encoding string
	// Scopes the standing material comes from besides global; nil means
	// the project's scope when the store has one.
	Scopes []string
	// Project is the current project; empty means the Memory's.
	Project string
	// NoStore takes nothing from the store: only Items are planned.
	NoStore bool
	// Log writes the plan and the block to plans/<plan id>.json.
	Log bool
	// Now decides which leased pins have expired; zero means time.Now.
	Now time.Time
	// Code is the project's code: with an index built, the context takes
	// its map and, for a Query, its touchpoints, as the mode says (see
	// Code.ContextItems). Nil takes none.
	Code *Code
	// CodeFiles are files the conversation names, for the touchpoints.
	CodeFiles []string
}

// Check reports the first part of req that no plan can take, as an
// *InvalidError whose Field is the part's name (mode, budget, encoding,
// scope): it needs no store, so a front end can check its arguments
// before it opens one, and name its own flag for the field. Context checks
// req the same way; the configuration's settings are checked where they
// are read.
func (req ContextRequest) Check() error {
	if _, err := plan.ParseMode(req.Mode); err != nil {
		return invalidField("mode", err)
	}
	if req.Budget < 0 {
		return invalidField("budget", errors.New("must not be negative"))
	}
	if req.Encoding != "" {
		if _, err := plan.NewTokenizer(req.Encoding); err != nil {
			return invalidField("encoding", err)
		}
	}
	for _, s := range req.Scopes {
		if err := mem.ValidScope(s); err != nil {
			return invalidField("scope", err)
		}
	}
	return nil
}

// Context plans the context block for a prompt: the request's items plus
// the store's standing material (pins, open corrections, active goals and
// tasks, each scope's latest summaries) under the token budget, counted
// with a real tokenizer. Identical inputs give identical bytes.
func (m *Memory) Context(ctx context.Context, req ContextRequest) (*plan.Plan, error) {
	if err := req.Check(); err != nil {
		return nil, err
	}
	mode, err := plan.ParseMode(cmp.Or(req.Mode, m.cfg.Context.Mode))
	if err != nil {
		return nil, invalidField("mode", err)
	}
	lim := m.ContextLimits(mode)
	if req.Budget > 0 {
		lim.Budget = req.Budget
	}
	tok, err := plan.NewTokenizer(cmp.Or(req.Encoding, m.cfg.Context.Encoding))
	if err != nil {
		return nil, invalidField("encoding", err)
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	items := slices.Clone(req.Items)
	if m.st == nil && !req.NoStore {
		return nil, invalidf("a detached memory plans only the items given (NoStore)")
	}
	if !req.NoStore {
		scopes := m.contextScopes(req.Scopes, cmp.Or(req.Project, m.opt.Project))
		recs, err := m.Standing(ctx, scopes, now)
		if err != nil {
			return nil, err
		}
		for _, s := range scopes {
			sums, err := summarize.Summaries(m.st, s, func(err error) { m.warn("", err) })
			if err != nil {
				return nil, err
			}
			for _, e := range sums {
				recs = append(recs, e.Record())
			}
		}
		for _, r := range recs {
			it := plan.FromRecord(r)
			it.Auto = true
			items = append(items, it)
		}
	}
	if req.Code != nil {
		code, err := req.Code.ContextItems(ctx, CodeContext{Mode: mode, Limits: lim, Query: req.Query, Files: req.CodeFiles})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The memories matter more than the code beside them.
			m.warn("", err)
		}
		items = append(items, code...)
	}
	p, err := plan.Build(items, plan.Options{Mode: mode, Limits: lim, Encoding: tok.Name(), Query: req.Query, Now: now, Closed: m.closedTasks(ctx)})
	if err != nil {
		return nil, err
	}
	if req.Log && m.home != "" {
		if err := m.logPlan(p); err != nil {
			return nil, fmt.Errorf("cannot log the plan: %w", err)
		}
	}
	return p, nil
}

// Standing returns what the store contributes to every context from the
// given scopes: unexpired pins, and corrections, goals and tasks that are
// not closed, found through the index so the store is never walked.
func (m *Memory) Standing(ctx context.Context, scopes []string, now time.Time) ([]mem.Record, error) {
	var paths []string
	err := m.readIndex(ctx, func(ix *index.Index) error {
		var err error
		paths, err = ix.Standing(scopes, 10000)
		if err != nil {
			return fmt.Errorf("search: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []mem.Record
	for _, p := range newestPerDir(paths, maxStandingPerDir) {
		e, err := m.st.Read(p)
		if err != nil {
			m.warn(p, err)
			continue
		}
		if e.Deleted() || !standingEntry(e, now) {
			continue
		}
		out = append(out, e.Record())
	}
	return out, nil
}

// maxStandingPerDir bounds the standing entries read from one directory
// (say, a scope's tasks): no mode shows more than a few dozen items, and a
// store with thousands of tasks never closed must not make every context
// read them all.
const maxStandingPerDir = 100

// newestPerDir keeps the last n paths of each directory. Paths come sorted,
// and file names start with the creation time, so those are the newest.
func newestPerDir(paths []string, n int) []string {
	var out []string
	start := 0
	for i := 1; i <= len(paths); i++ {
		if i < len(paths) && path.Dir(paths[i]) == path.Dir(paths[start]) {
			continue
		}
		group := paths[start:i]
		out = append(out, group[max(0, len(group)-n):]...)
		start = i
	}
	return out
}

// standingEntry reports whether an entry found by Standing still belongs in
// a context: a pin that has not expired, or an open correction, goal or task.
func standingEntry(e *mem.Entry, now time.Time) bool {
	switch e.Pin {
	case mem.PinSticky:
		return true
	case mem.PinLeased:
		if e.PinUntil.IsZero() || e.PinUntil.After(now) {
			return true
		}
	}
	if !slices.Contains(index.StandingKinds, e.Kind) {
		return false
	}
	return !IsClosed(e.Status)
}

// contextScopes returns the scopes standing material comes from: global,
// the given ones, and by default the project's scope when the store has
// one.
func (m *Memory) contextScopes(given []string, project string) []string {
	out := []string{mem.DefaultScope}
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, s := range given {
		add(s)
	}
	if len(given) == 0 && project != "" && mem.ValidScope(project) == nil {
		if m.st.HasScope(project) {
			add(project)
		}
	}
	return out
}

// planLog is what a logged plan holds: the plan and the exact block.
type planLog struct {
	Plan   json.RawMessage `json:"plan"`
	Prompt string          `json:"prompt"`
}

// logPlan writes plans/<id>.json under the store. The file's content
// depends only on the plan, so writing it again changes nothing.
func (m *Memory) logPlan(p *plan.Plan) error {
	js, err := p.JSON()
	if err != nil {
		return err
	}
	dir := filepath.Join(m.home, "plans")
	if err := os.MkdirAll(dir, mem.DirMode); err != nil {
		return err
	}
	file := filepath.Join(dir, p.ID+".json")
	if _, err := os.Stat(file); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(planLog{Plan: js, Prompt: p.Prompt()}); err != nil {
		return err
	}
	return atomicfile.Write(file, buf.Bytes(), mem.FileMode, false)
}
