package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/miramem/mira"
	"github.com/miramem/mira/agentloop/tools"
	"github.com/miramem/mira/cmd/internal/codefmt"
	"github.com/miramem/mira/code"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/mem"
)

// agentCode is the code index of the session's project, for the context
// (agentloop.Code: the map in the standing context, code cards with each
// message) and for the code tool (tools.CodeIndex). /switch moves it to
// the new project's index. The index is opened at its first use; the
// context takes code only from an index that exists, while the code tool
// builds one when asked.
type agentCode struct {
	m      *mira.Memory
	getenv func(string) string
	warn   func(path string, err error)

	mu   sync.Mutex
	root string // the project's root
	// maxFiles bounds the files of a project the code tool indexes by
	// itself (0: DefaultMaxBuildFiles).
	maxFiles int
	code     *mira.Code // nil: not opened yet
	err      error      // why it could not be opened
	// maps are the code maps of the project by mode, kept while the
	// project is the same: the standing context must keep its bytes for
	// a provider's prompt cache, while edits change the index.
	maps map[plan.Mode][]plan.Item
}

func newAgentCode(m *mira.Memory, p mem.Project, getenv func(string) string, warn func(string, error)) *agentCode {
	return &agentCode{m: m, root: p.Root, getenv: getenv, warn: warn}
}

// switchTo moves to the project p, closing the index of the last one.
func (c *agentCode) switchTo(p mem.Project) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.Root == c.root {
		return
	}
	c.closeLocked()
	c.root, c.maps, c.err = p.Root, nil, nil
}

// Close closes the index.
func (c *agentCode) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeLocked()
}

func (c *agentCode) closeLocked() error {
	var err error
	if c.code != nil {
		err = c.code.Close()
	}
	c.code = nil
	return err
}

// open returns the project's index, opening it the first time. build
// false gives nil for a project never indexed.
func (c *agentCode) open(ctx context.Context, build bool) (*mira.Code, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.code != nil || c.err != nil {
		return c.code, c.err
	}
	if c.root == "" {
		return nil, errors.New("no project")
	}
	indexed := mira.CodeIndexed(c.root, "", c.getenv)
	if !indexed && !build {
		return nil, nil
	}
	if !indexed {
		if err := c.buildable(); err != nil {
			if c.warn != nil {
				c.warn("", err)
			}
			return nil, err
		}
	}
	// A watcher spares a long session a stat of every file before each
	// read; for a tree never indexed, it waits until there is an index.
	code, err := mira.OpenCode(ctx, mira.CodeOptions{Root: c.root, Memory: c.m, Watch: indexed, Warn: c.warn, Getenv: c.getenv})
	if err != nil {
		if ctx.Err() == nil {
			c.err = fmt.Errorf("cannot open the code index of %s: %w", c.root, err)
		}
		return nil, cmpErr(c.err, err)
	}
	c.code = code
	return code, nil
}

// DefaultMaxBuildFiles is the most files the code tool indexes by
// itself; a larger tree is for mira-code index.
const DefaultMaxBuildFiles = 50000

// buildable says why the code tool must not build the index of the
// project itself: its root is the user's home directory or the file
// system's root (the agent was started outside any project), or it holds
// more than maxFiles files the index would read. Building such an index
// takes minutes and gigabytes the user did not ask for; mira-code index
// does it when asked.
func (c *agentCode) buildable() error {
	how := fmt.Sprintf("run \"mira-code index\" in %s to index it anyway, or start mira-agent in a project's directory (or --project PATH)", c.root)
	home := cmp.Or(c.getenv("HOME"), c.getenv("USERPROFILE"))
	root := filepath.Clean(c.root)
	if home != "" && sameDir(root, home) {
		return fmt.Errorf("no code index: the project's root %s is your home directory, too large to index here; %s", c.root, how)
	}
	if filepath.Dir(root) == root {
		return fmt.Errorf("no code index: the project's root is %s, the file system's root; %s", c.root, how)
	}
	limit := cmp.Or(c.maxFiles, DefaultMaxBuildFiles)
	n, err := countFiles(root, limit)
	if err != nil {
		return fmt.Errorf("no code index: cannot list %s: %w", c.root, err)
	}
	if n > limit {
		return fmt.Errorf("no code index: %s holds more than %d files, too many to index here; %s", c.root, limit, how)
	}
	return nil
}

// sameDir reports whether a and b are one directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// errTooMany stops countFiles.
var errTooMany = errors.New("too many files")

// countFiles counts the files under root the index would look at (not in
// the directories it leaves out), up to limit+1.
func countFiles(root string, limit int) (int, error) {
	f := code.NewDirFilter(root)
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if d.IsDir() {
			if p != root {
				rel, _ := filepath.Rel(root, p)
				if f.Skip(filepath.ToSlash(rel)) {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if n++; n > limit {
			return errTooMany
		}
		return nil
	})
	if errors.Is(err, errTooMany) {
		err = nil
	}
	return n, err
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// Limits implements agentloop.Code.
func (c *agentCode) Limits(mode plan.Mode) plan.Limits { return c.m.ContextLimits(mode) }

// Map implements agentloop.Code.
func (c *agentCode) Map(ctx context.Context, mode plan.Mode) ([]plan.Item, error) {
	c.mu.Lock()
	items, ok := c.maps[mode]
	c.mu.Unlock()
	if ok {
		return items, nil
	}
	code, err := c.open(ctx, false)
	if code == nil || err != nil {
		return nil, err
	}
	items, err = code.ContextItems(ctx, mira.CodeContext{Mode: mode, Limits: c.Limits(mode), NoTouchpoints: true})
	if err != nil || len(items) == 0 {
		return nil, err
	}
	c.mu.Lock()
	if c.code == code {
		if c.maps == nil {
			c.maps = map[plan.Mode][]plan.Item{}
		}
		c.maps[mode] = items
	}
	c.mu.Unlock()
	return items, nil
}

// Touchpoints implements agentloop.Code: the files named that are the
// project's are the query's Files, so that what changes with them counts.
func (c *agentCode) Touchpoints(ctx context.Context, mode plan.Mode, text string, named []string) ([]plan.Item, error) {
	code, err := c.open(ctx, false)
	if code == nil || err != nil {
		return nil, err
	}
	return code.ContextItems(ctx, mira.CodeContext{Mode: mode, Limits: c.Limits(mode), Query: text, Files: projectFiles(code, named), NoMap: true})
}

// maxNamedFiles bounds the files of the conversation a query takes.
const maxNamedFiles = 8

// projectFiles keeps the paths that name a file of the project (relative
// to its root or to the working directory, or absolute inside it), as
// the index names them.
func projectFiles(code *mira.Code, paths []string) []string {
	var out []string
	for _, p := range paths {
		if strings.HasPrefix(p, "~") {
			continue
		}
		rel := code.Rel(p)
		if rel == "" || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") || slices.Contains(out, rel) {
			continue
		}
		if fi, err := os.Stat(filepath.Join(code.Root(), filepath.FromSlash(rel))); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, rel)
		if len(out) == maxNamedFiles {
			break
		}
	}
	return out
}

// agentCodeTool is the code tool's index (tools.CodeIndex): its actions
// build the index when the project has none yet.
type agentCodeTool struct{ c *agentCode }

func (t agentCodeTool) Symbols(ctx context.Context, query string, k int) (string, error) {
	code, err := t.c.open(ctx, true)
	if err != nil {
		return "", err
	}
	hits, err := code.Symbols(ctx, query, k)
	return codefmt.Symbols(hits), err
}

func (t agentCodeTool) Card(ctx context.Context, ref string, body bool) (string, error) {
	code, err := t.c.open(ctx, true)
	if err != nil {
		return "", err
	}
	card, err := code.Card(ctx, ref, body)
	if err != nil {
		return "", err
	}
	return codefmt.Card(card), nil
}

func (t agentCodeTool) Callers(ctx context.Context, ref string, depth int) (string, error) {
	code, err := t.c.open(ctx, true)
	if err != nil {
		return "", err
	}
	edges, err := code.Callers(ctx, ref, depth)
	return codefmt.Edges(edges), err
}

func (t agentCodeTool) Callees(ctx context.Context, ref string, depth int) (string, error) {
	code, err := t.c.open(ctx, true)
	if err != nil {
		return "", err
	}
	edges, err := code.Callees(ctx, ref, depth)
	return codefmt.Edges(edges), err
}

func (t agentCodeTool) Touchpoints(ctx context.Context, text string, k int) (string, error) {
	code, err := t.c.open(ctx, true)
	if err != nil {
		return "", err
	}
	tps, err := code.Touchpoints(ctx, mira.CodeQuery{Text: text, K: k, Explain: true})
	return codefmt.Touchpoints(tps, true), err
}

func (t agentCodeTool) Cochange(ctx context.Context, path string, k int) (string, error) {
	code, err := t.c.open(ctx, true)
	if err != nil {
		return "", err
	}
	cs, err := code.Cochange(ctx, code.Rel(path), k)
	return codefmt.Cochange(cs), err
}

// registerCode offers the code tool, over the session's project index.
func (s *agentSession) registerCode(reg *tools.Registry) error {
	if s.code == nil {
		return nil
	}
	return reg.Register(tools.NewCodeTool(agentCodeTool{s.code}))
}
