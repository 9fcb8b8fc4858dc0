package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/mem"
)

// CodeCmd is mira-code.
type CodeCmd struct {
	Common
	ProjectRoot string `name:"project-root" help:"The project to index (default: the one the working directory belongs to: .mira/project.yaml, the git root, a go.mod, Cargo.toml, package.json or pyproject.toml)." placeholder:"DIR" type:"path"`
	IndexDir    string `name:"index-dir" help:"Where the index lives (default: $XDG_CACHE_HOME/mira/code/<name>-<hash>; never in the project)." placeholder:"DIR" type:"path"`
	NoMemory    bool   `name:"no-memory" help:"Leave memories out: cards list none, and none raises the code it names."`
	Encoding    string `short:"e" help:"Tokenizer for --budget and the map: o200k_base or cl100k_base." default:"${encoding}"`

	Index       CodeIndexCmd       `cmd:"" help:"Build or update the index now (every query does this by itself), and print the time of each phase: definitions, references, ranking, history, save."`
	Status      CodeStatusCmd      `cmd:"" help:"Files, definitions, references and languages indexed, the indexed commit, and files changed since."`
	Symbols     CodeSymbolsCmd     `cmd:"" help:"Find definitions by name or words."`
	Card        CodeCardCmd        `cmd:"" help:"Show a definition: path, signature, doc, the first lines (--body: all), and the memories that point at it."`
	Callers     CodeEdgesCmd       `cmd:"" set:"edges=callers" help:"Show where a definition is called, and by whom (--depth levels)."`
	Callees     CodeEdgesCmd       `cmd:"" set:"edges=callees" help:"Show what a definition calls (--depth levels)."`
	Map         CodeMapCmd         `cmd:"" name:"map" help:"Print the module tree with its central definitions, under a token budget."`
	Touchpoints CodeTouchpointsCmd `cmd:"" help:"Rank the definitions a task needs, with excerpts and reasons."`
	Files       CodeFilesCmd       `cmd:"" help:"Rank the files a task needs."`
	Cochange    CodeCochangeCmd    `cmd:"" help:"Files that changed in the same commits as a file."`
	Experts     CodeExpertsCmd     `cmd:"" help:"Who changed a file, most and most recently first."`
	Log         CodeLogCmd         `cmd:"" help:"Recent commits touching a file or a definition's file."`
}

// Code is the main of mira-code.
func Code(args []string, o *IO) int {
	return Main("mira-code", "Code intelligence for the current project: an incremental index of its definitions, call graph, module map and git history, outside the project.", &CodeCmd{}, args, o)
}

// AfterApply gives the subcommands the options of the command.
func (c *CodeCmd) AfterApply() error {
	for _, p := range []**CodeCmd{&c.Index.c, &c.Status.c, &c.Symbols.c, &c.Card.c, &c.Callers.c, &c.Callees.c,
		&c.Map.c, &c.Touchpoints.c, &c.Files.c, &c.Cochange.c, &c.Experts.c, &c.Log.c} {
		*p = c
	}
	c.Callers.callers = true
	return nil
}

// openCode opens the project's code index; with memory, and unless
// --no-memory, the store too, when there is one.
func (c *CodeCmd) openCode(ctx context.Context, o *IO, memory bool) (*mira.Code, func(), error) {
	root := c.ProjectRoot
	if root == "" {
		wd, err := o.Getwd()
		if err != nil {
			return nil, nil, fmt.Errorf("cannot find the project: %w", err)
		}
		root = mira.ProjectRoot(wd)
	}
	warn := NewWarner(o)
	opt := mira.CodeOptions{Root: root, Dir: c.IndexDir, Encoding: c.Encoding, Warn: warn.Warn, Getenv: o.Getenv}
	if o.ErrTTY {
		if o.progress == nil {
			o.progress = newProgress(o)
		}
		opt.Progress = o.progress.update
	}
	var m *mira.Memory
	if memory && !c.NoMemory && c.Home != "" {
		var err error
		m, err = c.openWith(ctx, o, "mira-code", project(o, ""), openOptions{existing: true})
		switch {
		case errors.Is(err, mira.ErrNoStore):
			m = nil // no memories yet: code alone
		case err != nil:
			o.Warnf("warning: memories left out: %v", err)
			m = nil
		}
		opt.Memory = m
	}
	cd, err := mira.OpenCode(ctx, opt)
	if err != nil {
		if m != nil {
			m.Close()
		}
		return nil, nil, fmt.Errorf("cannot open the code index: %w", err)
	}
	return cd, func() {
		cd.Close()
		if m != nil {
			m.Close()
		}
	}, nil
}

// codeFlags are mira-code's flags by the names the library gives the
// arguments of its code queries.
var codeFlags = map[string]string{"k": "-k", "depth": "--depth", "budget": "--budget"}

// runCode opens the index, asks it, and prints the answer: JSONL, or for
// a person with text, one item at a time.
func runCode[T any](ctx context.Context, o *IO, c *CodeCmd, memory bool, ask func(*mira.Code) ([]T, error), text func(*strings.Builder, styler, T)) error {
	cd, done, err := c.openCode(ctx, o, memory)
	if err != nil {
		return err
	}
	defer done()
	items, err := ask(cd)
	if err != nil {
		return asFlag(err, codeFlags)
	}
	return writeCode(o, c.Output, items, text)
}

// one is a single answer as a list of answers.
func one[T any](v T, err error) ([]T, error) { return []T{v}, err }

// CodeIndexCmd is mira-code index.
type CodeIndexCmd struct {
	c *CodeCmd `kong:"-"`
}

func (x *CodeIndexCmd) run(ctx context.Context, o *IO) error {
	// A first build goes through the whole tree: the collector of a bulk
	// command (peak 1.3 GB at the raised target on GOROOT/src, 0.7 GB here).
	bulkGC(0)
	return runCode(ctx, o, x.c, false, func(cd *mira.Code) ([]mira.CodeStats, error) {
		st, err := cd.Update(ctx)
		if err != nil {
			return nil, fmt.Errorf("cannot update the code index: %w", err)
		}
		return []mira.CodeStats{st}, nil
	}, func(b *strings.Builder, _ styler, st mira.CodeStats) {
		fmt.Fprintf(b, "%d files indexed (%d added, %d changed, %d removed, %d skipped), %d commits read, in %s\n",
			st.Files, st.Added, st.Changed, st.Removed, st.Skipped, st.Commits, st.Took.Round(time.Millisecond))
		// The phases, wall time and the process's CPU time over each.
		for _, p := range st.Phases {
			fmt.Fprintf(b, "  %-12s %9s wall %9s CPU\n", p.Name, p.Wall.Round(time.Millisecond), p.CPU.Round(time.Millisecond))
		}
	})
}

// CodeStatusCmd is mira-code status.
type CodeStatusCmd struct {
	c *CodeCmd `kong:"-"`
}

func (x *CodeStatusCmd) run(ctx context.Context, o *IO) error {
	return runCode(ctx, o, x.c, false, func(cd *mira.Code) ([]mira.CodeStatus, error) {
		return one(cd.Status(ctx))
	}, writeStatus)
}

// writeStatus prints the index's status for a person.
func writeStatus(b *strings.Builder, _ styler, s mira.CodeStatus) {
	updated := "never (the next query builds it)"
	if !s.Updated.IsZero() {
		updated = time.Since(s.Updated).Round(time.Second).String() + " ago"
	}
	fmt.Fprintf(b, "root:      %s\n", esc(s.Root))
	fmt.Fprintf(b, "index:     %s\n", esc(s.Dir))
	fmt.Fprintf(b, "files:     %d (%d definitions, %d references)\n", s.Files, s.Symbols, s.Refs)
	langs := make([]string, 0, len(s.Languages))
	for _, name := range sortedKeys(s.Languages) {
		langs = append(langs, fmt.Sprintf("%s %d", cmp.Or(name, "text"), s.Languages[name].Files))
	}
	fmt.Fprintf(b, "languages: %s\n", strings.Join(langs, ", "))
	if len(s.Skipped) > 0 {
		var sk []string
		for _, why := range sortedKeys(s.Skipped) {
			sk = append(sk, fmt.Sprintf("%d %s", s.Skipped[why], why))
		}
		fmt.Fprintf(b, "skipped:   %s\n", strings.Join(sk, ", "))
	}
	fmt.Fprintf(b, "commit:    %s\n", cmp.Or(s.Head, "none"))
	fmt.Fprintf(b, "updated:   %s\n", updated)
	fmt.Fprintf(b, "stale:     %s (changed on disk since; the next query takes them in)\n", files(len(s.Stale)))
}

// CodeSymbolsCmd is mira-code symbols.
type CodeSymbolsCmd struct {
	c     *CodeCmd `kong:"-"`
	Query []string `arg:"" help:"A name, part of one, or words."`
	K     int      `short:"k" help:"How many definitions to show." default:"20"`
}

func (x *CodeSymbolsCmd) run(ctx context.Context, o *IO) error {
	return runCode(ctx, o, x.c, false, func(cd *mira.Code) ([]mira.CodeSymbolHit, error) {
		return cd.Symbols(ctx, strings.Join(x.Query, " "), x.K)
	}, func(b *strings.Builder, st styler, h mira.CodeSymbolHit) {
		fmt.Fprintf(b, "%s  %s  %s%s\n", st.place(h.Path, h.Line), st.dim(h.Kind), st.bold(qualified(h.Card)), st.stale(h.Stale))
		writeIndented(b, "    ", esc(h.Signature))
	})
}

// CodeCardCmd is mira-code card.
type CodeCardCmd struct {
	c    *CodeCmd `kong:"-"`
	Ref  string   `arg:"" name:"SYMBOL|FILE:LINE" help:"A name (Execute), a qualified one (Command.Execute), a place (cmd/run.go:42) or a file's definition (cmd/run.go#Execute)."`
	Body bool     `help:"Show the whole definition, not only its first lines."`
}

func (x *CodeCardCmd) run(ctx context.Context, o *IO) error {
	return runCode(ctx, o, x.c, true, func(cd *mira.Code) ([]mira.CodeCard, error) {
		card, err := cd.Card(ctx, x.Ref, x.Body)
		if err != nil && ctx.Err() == nil {
			// The reference names nothing the index holds: the input's fault.
			return nil, &UsageError{fmt.Errorf("card: %w", err)}
		}
		return []mira.CodeCard{card}, err
	}, func(b *strings.Builder, st styler, c mira.CodeCard) {
		writeCard(b, st, c, "")
	})
}

// writeCard prints a card for a person, each line after indent.
func writeCard(b *strings.Builder, st styler, c mira.CodeCard, indent string) {
	span := fmt.Sprintf("%s:%d", c.Path, c.Line)
	if c.EndLine > c.Line {
		span += fmt.Sprintf("-%d", c.EndLine)
	}
	fmt.Fprintf(b, "%s%s  %s  %s%s\n", indent, st.bold(qualified(c)), st.dim(c.Kind), st.cyan(esc(span)), st.stale(c.Stale))
	writeIndented(b, indent+"    ", esc(c.Signature))
	if c.Doc != "" {
		for _, l := range strings.Split(mem.Escape(c.Doc, true), "\n") {
			writeIndented(b, indent+"    ", st.dim("// "+l))
		}
	}
	if c.Snippet != "" {
		b.WriteByte('\n')
		for _, l := range strings.Split(strings.TrimRight(mem.Escape(c.Snippet, true), "\n"), "\n") {
			fmt.Fprintf(b, "%s    %s\n", indent, l)
		}
	}
	for _, m := range c.Memories {
		writeIndented(b, indent+"    ", st.yellow("memory")+" "+esc(m))
	}
}

// writeIndented prints a line after indent, unless it is empty.
func writeIndented(b *strings.Builder, indent, line string) {
	if line != "" {
		b.WriteString(indent + line + "\n")
	}
}

// CodeEdgesCmd is mira-code callers, and callees.
type CodeEdgesCmd struct {
	c       *CodeCmd `kong:"-"`
	callers bool
	Symbol  string `arg:"" help:"A definition, as for card."`
	Depth   int    `short:"d" help:"Levels of ${edges} to follow." default:"1"`
}

func (x *CodeEdgesCmd) run(ctx context.Context, o *IO) error {
	return runCode(ctx, o, x.c, false, func(cd *mira.Code) ([]mira.CodeEdge, error) {
		if x.callers {
			return cd.Callers(ctx, x.Symbol, x.Depth)
		}
		return cd.Callees(ctx, x.Symbol, x.Depth)
	}, writeEdge)
}

// writeEdge prints a call site for a person, indented by its depth.
func writeEdge(b *strings.Builder, st styler, e mira.CodeEdge) {
	indent := strings.Repeat("  ", max(e.Depth-1, 0))
	fmt.Fprintf(b, "%s%s  %s → %s%s\n", indent, st.place(e.Path, e.Line), st.bold(qualified(e.From)), st.bold(qualified(e.To)), st.stale(e.From.Stale))
}

// CodeMapCmd is mira-code map.
type CodeMapCmd struct {
	c      *CodeCmd `kong:"-"`
	Budget int      `short:"b" help:"Most tokens the map may take." default:"2000"`
}

func (x *CodeMapCmd) run(ctx context.Context, o *IO) error {
	return runCode(ctx, o, x.c, false, func(cd *mira.Code) ([]mira.CodeMap, error) {
		return one(cd.Map(ctx, x.Budget))
	}, func(b *strings.Builder, _ styler, m mira.CodeMap) {
		b.WriteString(mem.Escape(strings.TrimRight(m.Text, "\n"), true) + "\n")
	})
}

// CodeTouchpointsCmd is mira-code touchpoints.
type CodeTouchpointsCmd struct {
	c       *CodeCmd `kong:"-"`
	Text    []string `arg:"" optional:"" help:"The task, in plain words (default: standard input)."`
	K       int      `short:"k" help:"How many definitions to show." default:"12"`
	Budget  int      `short:"b" help:"Most tokens the cards may take together (0: no limit)." default:"0"`
	File    []string `short:"f" help:"Files the task is about (repeatable): what changes with them counts too." placeholder:"PATH"`
	Explain bool     `help:"Show why each was chosen."`
}

func (x *CodeTouchpointsCmd) run(ctx context.Context, o *IO) error {
	q, err := codeQuery(o, x.Text, x.K, x.Budget, x.Explain)
	if err != nil {
		return err
	}
	return runCode(ctx, o, x.c, true, func(cd *mira.Code) ([]mira.CodeTouchpoint, error) {
		return cd.Touchpoints(ctx, withFiles(q, cd, x.File))
	}, func(b *strings.Builder, st styler, t mira.CodeTouchpoint) {
		fmt.Fprintf(b, "%s  %s  %s  %s%s\n", st.place(t.Path, t.Line), st.bold(qualified(t.Card)), st.dim(t.Kind),
			st.dim(fmt.Sprintf("score %.3f", t.Score)), st.stale(t.Stale))
		writeIndented(b, "    ", esc(t.Signature))
		writeWhy(b, st, t.Why, x.Explain)
	})
}

// CodeFilesCmd is mira-code files.
type CodeFilesCmd struct {
	c       *CodeCmd `kong:"-"`
	Text    []string `arg:"" optional:"" help:"The task, in plain words (default: standard input)."`
	K       int      `short:"k" help:"How many files to show." default:"20"`
	File    []string `short:"f" help:"Files the task is about (repeatable): what changes with them counts too." placeholder:"PATH"`
	Explain bool     `help:"Show why each was chosen."`
}

func (x *CodeFilesCmd) run(ctx context.Context, o *IO) error {
	q, err := codeQuery(o, x.Text, x.K, 0, x.Explain)
	if err != nil {
		return err
	}
	return runCode(ctx, o, x.c, true, func(cd *mira.Code) ([]mira.CodeFileHit, error) {
		return cd.Files(ctx, withFiles(q, cd, x.File))
	}, func(b *strings.Builder, st styler, h mira.CodeFileHit) {
		fmt.Fprintf(b, "%s  %s%s\n", st.dim(fmt.Sprintf("%.3f", h.Score)), st.cyan(esc(h.Path)), st.stale(h.Stale))
		writeWhy(b, st, h.Why, x.Explain)
	})
}

// codeQuery makes the query of touchpoints and files from the arguments,
// else from standard input.
func codeQuery(o *IO, args []string, k, budget int, explain bool) (mira.CodeQuery, error) {
	if k == 0 {
		k = -1 // for the library 0 is the default; -k 0 asks for nothing
	}
	q := mira.CodeQuery{Text: strings.Join(args, " "), K: k, Budget: budget, Explain: explain}
	if len(args) == 0 {
		if o.InTTY {
			return q, usagef("no task: give it as arguments or on standard input")
		}
		b, err := io.ReadAll(io.LimitReader(o.In, maxLine+1))
		if err != nil {
			return q, fmt.Errorf("<stdin>: %w", err)
		}
		if len(b) > maxLine {
			return q, usagef("<stdin>: longer than %s", mem.ByteSize(maxLine))
		}
		q.Text = string(b)
	}
	return q, nil
}

// withFiles adds the files named on the command line to q, as the index
// names them.
func withFiles(q mira.CodeQuery, cd *mira.Code, files []string) mira.CodeQuery {
	for _, f := range files {
		q.Files = append(q.Files, cd.Rel(f))
	}
	return q
}

// writeWhy prints the reasons of a result: with explain all of them,
// else those of the memories that point at it.
func writeWhy(b *strings.Builder, st styler, why []string, explain bool) {
	for _, w := range why {
		if explain || strings.HasPrefix(w, "memory") {
			writeIndented(b, "    ", st.dim("· "+esc(w)))
		}
	}
}

// CodeCochangeCmd is mira-code cochange.
type CodeCochangeCmd struct {
	c    *CodeCmd `kong:"-"`
	Path string   `arg:"" help:"A file of the project."`
	K    int      `short:"k" help:"How many files to show." default:"10"`
}

func (x *CodeCochangeCmd) run(ctx context.Context, o *IO) error {
	return runCode(ctx, o, x.c, false, func(cd *mira.Code) ([]mira.CodeCochange, error) {
		return cd.Cochange(ctx, x.Path, x.K)
	}, func(b *strings.Builder, st styler, c mira.CodeCochange) {
		fmt.Fprintf(b, "%s  %s  %s  %s\n", st.dim(fmt.Sprintf("%.3f", c.Weight)), st.cyan(esc(c.Path)),
			plural(c.Count, "commit"), st.dim("last "+day(c.Last)))
	})
}

// CodeExpertsCmd is mira-code experts.
type CodeExpertsCmd struct {
	c    *CodeCmd `kong:"-"`
	Path string   `arg:"" help:"A file of the project."`
}

func (x *CodeExpertsCmd) run(ctx context.Context, o *IO) error {
	return runCode(ctx, o, x.c, false, func(cd *mira.Code) ([]mira.CodeExpert, error) {
		return cd.Experts(ctx, x.Path)
	}, func(b *strings.Builder, st styler, e mira.CodeExpert) {
		fmt.Fprintf(b, "%s  %s <%s>  %s  %s\n", st.dim(fmt.Sprintf("%.3f", e.Weight)), st.bold(esc(e.Author)), esc(e.Email),
			plural(e.Commits, "commit"), st.dim("last "+day(e.Last)))
	})
}

// CodeLogCmd is mira-code log.
type CodeLogCmd struct {
	c   *CodeCmd `kong:"-"`
	Ref string   `arg:"" name:"PATH|SYMBOL" help:"A file of the project, or a definition (the commits touching its file)."`
	K   int      `short:"k" help:"How many commits to show." default:"20"`
}

func (x *CodeLogCmd) run(ctx context.Context, o *IO) error {
	return runCode(ctx, o, x.c, false, func(cd *mira.Code) ([]mira.CodeCommit, error) {
		return cd.Log(ctx, x.Ref, x.K)
	}, func(b *strings.Builder, st styler, c mira.CodeCommit) {
		fmt.Fprintf(b, "%s  %s  %s  %s\n", st.yellow(shortHash(c.Hash)), st.dim(day(c.When)), esc(c.Author), esc(c.Subject))
	})
}

// writeCode prints results as JSONL, or for a person with text.
func writeCode[T any](o *IO, mode string, items []T, text func(*strings.Builder, styler, T)) error {
	if !o.textOutput(mode) {
		w := newRecordWriter(o.Out)
		for _, it := range items {
			if err := w.Write(it); err != nil {
				return err
			}
		}
		return w.Flush()
	}
	var b strings.Builder
	st := styler{color: o.Color()}
	for _, it := range items {
		text(&b, st, it)
	}
	_, err := io.WriteString(o.Out, b.String())
	return err
}

// styler colours text for a terminal that takes colours.
type styler struct{ color bool }

func (s styler) style(code, t string) string {
	if !s.color {
		return t
	}
	return "\x1b[" + code + "m" + t + "\x1b[0m"
}
func (s styler) bold(t string) string   { return s.style("1", t) }
func (s styler) dim(t string) string    { return s.style("2", t) }
func (s styler) cyan(t string) string   { return s.style("36", t) }
func (s styler) yellow(t string) string { return s.style("33", t) }
func (s styler) place(path string, line int) string {
	return s.cyan(esc(fmt.Sprintf("%s:%d", path, line)))
}
func (s styler) stale(stale bool) string {
	if !stale {
		return ""
	}
	return "  " + s.style("31", "(changed since indexed)")
}

// esc escapes the control characters of a value printed for a person: a
// source file's name or text must not drive the terminal.
func esc(s string) string { return mem.Escape(s, false) }

// qualified is a definition's name with its parent's.
func qualified(c mira.CodeCard) string {
	if c.Parent != "" {
		return esc(c.Parent + "." + c.Name)
	}
	return esc(c.Name)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func day(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02")
}

func shortHash(h string) string {
	if len(h) > 10 {
		return h[:10]
	}
	return h
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
