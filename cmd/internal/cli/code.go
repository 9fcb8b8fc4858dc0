package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

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
	Callers     CodeCallersCmd     `cmd:"" help:"Show where a definition is called, and by whom (--depth levels)."`
	Callees     CodeCalleesCmd     `cmd:"" help:"Show what a definition calls (--depth levels)."`
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

// CodeIndexCmd is mira-code index.
type CodeIndexCmd struct {
	c *CodeCmd `kong:"-"`
}

func (x *CodeIndexCmd) run(ctx context.Context, o *IO) error {
	cd, done, err := x.c.openCode(ctx, o, false)
	if err != nil {
		return err
	}
	defer done()
	start := time.Now()
	st, err := cd.Update(ctx)
	if err != nil {
		return fmt.Errorf("cannot update the code index: %w", err)
	}
	took := time.Since(start)
	if !o.textOutput(x.c.Output) {
		return writeJSONL(o, []any{codeJSON(st, "took", took)})
	}
	if _, err = fmt.Fprintf(o.Out, "%d files indexed (%d added, %d changed, %d removed, %d skipped), %d commits read, in %s\n",
		st.Files, st.Added, st.Changed, st.Removed, st.Skipped, st.Commits, took.Round(time.Millisecond)); err != nil {
		return err
	}
	// The phases, wall time and the process's CPU time over each.
	for _, p := range st.Phases {
		if _, err = fmt.Fprintf(o.Out, "  %-12s %9s wall %9s CPU\n", p.Name, p.Wall.Round(time.Millisecond), p.CPU.Round(time.Millisecond)); err != nil {
			return err
		}
	}
	return nil
}

// CodeStatusCmd is mira-code status.
type CodeStatusCmd struct {
	c *CodeCmd `kong:"-"`
}

func (x *CodeStatusCmd) run(ctx context.Context, o *IO) error {
	cd, done, err := x.c.openCode(ctx, o, false)
	if err != nil {
		return err
	}
	defer done()
	s, err := cd.Status(ctx)
	if err != nil {
		return err
	}
	if !o.textOutput(x.c.Output) {
		return writeJSONL(o, []any{codeJSON(s)})
	}
	var b strings.Builder
	updated := "never (the next query builds it)"
	if !s.Updated.IsZero() {
		updated = time.Since(s.Updated).Round(time.Second).String() + " ago"
	}
	fmt.Fprintf(&b, "root:      %s\n", esc(s.Root))
	fmt.Fprintf(&b, "index:     %s\n", esc(s.Dir))
	fmt.Fprintf(&b, "files:     %d (%d definitions, %d references)\n", s.Files, s.Symbols, s.Refs)
	langs := make([]string, 0, len(s.Languages))
	for _, name := range sortedKeys(s.Languages) {
		l := s.Languages[name]
		langs = append(langs, fmt.Sprintf("%s %d", cmpStr(name, "text"), l.Files))
	}
	fmt.Fprintf(&b, "languages: %s\n", strings.Join(langs, ", "))
	if len(s.Skipped) > 0 {
		var sk []string
		for _, why := range sortedKeys(s.Skipped) {
			sk = append(sk, fmt.Sprintf("%d %s", s.Skipped[why], why))
		}
		fmt.Fprintf(&b, "skipped:   %s\n", strings.Join(sk, ", "))
	}
	fmt.Fprintf(&b, "commit:    %s\n", cmpStr(s.Head, "none"))
	fmt.Fprintf(&b, "updated:   %s\n", updated)
	fmt.Fprintf(&b, "stale:     %s (changed on disk since; the next query takes them in)\n", files(len(s.Stale)))
	_, err = io.WriteString(o.Out, b.String())
	return err
}

// CodeSymbolsCmd is mira-code symbols.
type CodeSymbolsCmd struct {
	c     *CodeCmd `kong:"-"`
	Query []string `arg:"" help:"A name, part of one, or words."`
	K     int      `short:"k" help:"How many definitions to show." default:"20"`
}

func (x *CodeSymbolsCmd) run(ctx context.Context, o *IO) error {
	if x.K < 1 {
		return usagef("-k: must be at least 1")
	}
	cd, done, err := x.c.openCode(ctx, o, false)
	if err != nil {
		return err
	}
	defer done()
	hits, err := cd.Symbols(ctx, strings.Join(x.Query, " "), x.K)
	if err != nil {
		return err
	}
	return writeCode(o, x.c.Output, hits, func(b *strings.Builder, st styler, h mira.CodeSymbolHit) {
		fmt.Fprintf(b, "%s  %s  %s%s\n", st.place(h.Path, h.Line), st.dim(h.Kind), st.bold(qualified(h.Card)), st.stale(h.Stale))
		if h.Signature != "" {
			fmt.Fprintf(b, "    %s\n", esc(h.Signature))
		}
	})
}

// CodeCardCmd is mira-code card.
type CodeCardCmd struct {
	c    *CodeCmd `kong:"-"`
	Ref  string   `arg:"" name:"SYMBOL|FILE:LINE" help:"A name (Execute), a qualified one (Command.Execute), a place (cmd/run.go:42) or a file's definition (cmd/run.go#Execute)."`
	Body bool     `help:"Show the whole definition, not only its first lines."`
}

func (x *CodeCardCmd) run(ctx context.Context, o *IO) error {
	cd, done, err := x.c.openCode(ctx, o, true)
	if err != nil {
		return err
	}
	defer done()
	card, err := cd.Card(ctx, x.Ref, x.Body)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		// The reference names nothing the index holds: the input's fault.
		return &UsageError{fmt.Errorf("card: %w", err)}
	}
	return writeCode(o, x.c.Output, []mira.CodeCard{card}, func(b *strings.Builder, st styler, c mira.CodeCard) {
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
	if c.Signature != "" {
		fmt.Fprintf(b, "%s    %s\n", indent, esc(c.Signature))
	}
	if c.Doc != "" {
		for _, l := range strings.Split(mem.Escape(c.Doc, true), "\n") {
			fmt.Fprintf(b, "%s    %s\n", indent, st.dim("// "+l))
		}
	}
	if c.Snippet != "" {
		b.WriteByte('\n')
		for _, l := range strings.Split(strings.TrimRight(mem.Escape(c.Snippet, true), "\n"), "\n") {
			fmt.Fprintf(b, "%s    %s\n", indent, l)
		}
	}
	for _, m := range c.Memories {
		fmt.Fprintf(b, "%s    %s %s\n", indent, st.yellow("memory"), esc(m))
	}
}

// CodeCallersCmd is mira-code callers.
type CodeCallersCmd struct {
	c      *CodeCmd `kong:"-"`
	Symbol string   `arg:"" help:"A definition, as for card."`
	Depth  int      `short:"d" help:"Levels of callers to follow." default:"1"`
}

func (x *CodeCallersCmd) run(ctx context.Context, o *IO) error {
	return runEdges(ctx, o, x.c, x.Symbol, x.Depth, true)
}

// CodeCalleesCmd is mira-code callees.
type CodeCalleesCmd struct {
	c      *CodeCmd `kong:"-"`
	Symbol string   `arg:"" help:"A definition, as for card."`
	Depth  int      `short:"d" help:"Levels of callees to follow." default:"1"`
}

func (x *CodeCalleesCmd) run(ctx context.Context, o *IO) error {
	return runEdges(ctx, o, x.c, x.Symbol, x.Depth, false)
}

func runEdges(ctx context.Context, o *IO, c *CodeCmd, sym string, depth int, callers bool) error {
	if depth < 1 {
		return usagef("--depth: must be at least 1")
	}
	cd, done, err := c.openCode(ctx, o, false)
	if err != nil {
		return err
	}
	defer done()
	var edges []mira.CodeEdge
	if callers {
		edges, err = cd.Callers(ctx, sym, depth)
	} else {
		edges, err = cd.Callees(ctx, sym, depth)
	}
	if err != nil {
		return err
	}
	return writeCode(o, c.Output, edges, func(b *strings.Builder, st styler, e mira.CodeEdge) {
		indent := strings.Repeat("  ", max(e.Depth-1, 0))
		fmt.Fprintf(b, "%s%s  %s → %s%s\n", indent, st.place(e.Path, e.Line), st.bold(qualified(e.From)), st.bold(qualified(e.To)), st.stale(e.From.Stale))
	})
}

// CodeMapCmd is mira-code map.
type CodeMapCmd struct {
	c      *CodeCmd `kong:"-"`
	Budget int      `short:"b" help:"Most tokens the map may take." default:"2000"`
}

func (x *CodeMapCmd) run(ctx context.Context, o *IO) error {
	if x.Budget < 1 {
		return usagef("--budget: must be at least 1")
	}
	cd, done, err := x.c.openCode(ctx, o, false)
	if err != nil {
		return err
	}
	defer done()
	m, err := cd.Map(ctx, x.Budget)
	if err != nil {
		return err
	}
	if !o.textOutput(x.c.Output) {
		return writeJSONL(o, []any{codeJSON(m)})
	}
	_, err = io.WriteString(o.Out, mem.Escape(strings.TrimRight(m.Text, "\n"), true)+"\n")
	return err
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
	cd, done, err := x.c.openCode(ctx, o, true)
	if err != nil {
		return err
	}
	defer done()
	for _, f := range x.File {
		q.Files = append(q.Files, cd.Rel(f))
	}
	tps, err := cd.Touchpoints(ctx, q)
	if err != nil {
		return err
	}
	return writeCode(o, x.c.Output, tps, func(b *strings.Builder, st styler, t mira.CodeTouchpoint) {
		fmt.Fprintf(b, "%s  %s  %s  %s%s\n", st.place(t.Path, t.Line), st.bold(qualified(t.Card)), st.dim(t.Kind),
			st.dim(fmt.Sprintf("score %.3f", t.Score)), st.stale(t.Stale))
		if t.Signature != "" {
			fmt.Fprintf(b, "    %s\n", esc(t.Signature))
		}
		for _, w := range t.Why {
			if x.Explain || strings.HasPrefix(w, "memory") {
				fmt.Fprintf(b, "    %s\n", st.dim("· "+esc(w)))
			}
		}
	})
}

// codeQuery makes the query of touchpoints and files from the arguments,
// else from standard input.
func codeQuery(o *IO, args []string, k, budget int, explain bool) (mira.CodeQuery, error) {
	if k < 1 {
		return mira.CodeQuery{}, usagef("-k: must be at least 1")
	}
	if budget < 0 {
		return mira.CodeQuery{}, usagef("--budget: must be at least 0")
	}
	text := strings.Join(args, " ")
	if len(args) == 0 {
		if o.InTTY {
			return mira.CodeQuery{}, usagef("no task: give it as arguments or on standard input")
		}
		b, err := io.ReadAll(io.LimitReader(o.In, maxLine+1))
		if err != nil {
			return mira.CodeQuery{}, fmt.Errorf("<stdin>: %w", err)
		}
		if len(b) > maxLine {
			return mira.CodeQuery{}, usagef("<stdin>: longer than %s", mem.ByteSize(maxLine))
		}
		text = string(b)
	}
	if strings.TrimSpace(text) == "" {
		return mira.CodeQuery{}, usagef("no task: the text is empty")
	}
	return mira.CodeQuery{Text: text, K: k, Budget: budget, Explain: explain}, nil
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
	cd, done, err := x.c.openCode(ctx, o, true)
	if err != nil {
		return err
	}
	defer done()
	for _, f := range x.File {
		q.Files = append(q.Files, cd.Rel(f))
	}
	hits, err := cd.Files(ctx, q)
	if err != nil {
		return err
	}
	return writeCode(o, x.c.Output, hits, func(b *strings.Builder, st styler, h mira.CodeFileHit) {
		fmt.Fprintf(b, "%s  %s%s\n", st.dim(fmt.Sprintf("%.3f", h.Score)), st.cyan(esc(h.Path)), st.stale(h.Stale))
		for _, w := range h.Why {
			if x.Explain || strings.HasPrefix(w, "memory") {
				fmt.Fprintf(b, "    %s\n", st.dim("· "+esc(w)))
			}
		}
	})
}

// CodeCochangeCmd is mira-code cochange.
type CodeCochangeCmd struct {
	c    *CodeCmd `kong:"-"`
	Path string   `arg:"" help:"A file of the project."`
	K    int      `short:"k" help:"How many files to show." default:"10"`
}

func (x *CodeCochangeCmd) run(ctx context.Context, o *IO) error {
	if x.K < 1 {
		return usagef("-k: must be at least 1")
	}
	cd, done, err := x.c.openCode(ctx, o, false)
	if err != nil {
		return err
	}
	defer done()
	cs, err := cd.Cochange(ctx, x.Path, x.K)
	if err != nil {
		return err
	}
	return writeCode(o, x.c.Output, cs, func(b *strings.Builder, st styler, c mira.CodeCochange) {
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
	cd, done, err := x.c.openCode(ctx, o, false)
	if err != nil {
		return err
	}
	defer done()
	es, err := cd.Experts(ctx, x.Path)
	if err != nil {
		return err
	}
	return writeCode(o, x.c.Output, es, func(b *strings.Builder, st styler, e mira.CodeExpert) {
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
	if x.K < 1 {
		return usagef("-k: must be at least 1")
	}
	cd, done, err := x.c.openCode(ctx, o, false)
	if err != nil {
		return err
	}
	defer done()
	cs, err := cd.Log(ctx, x.Ref, x.K)
	if err != nil {
		return err
	}
	return writeCode(o, x.c.Output, cs, func(b *strings.Builder, st styler, c mira.CodeCommit) {
		fmt.Fprintf(b, "%s  %s  %s  %s\n", st.yellow(shortHash(c.Hash)), st.dim(day(c.When)), esc(c.Author), esc(c.Subject))
	})
}

// writeCode prints results as JSONL, or for a person with text.
func writeCode[T any](o *IO, mode string, items []T, text func(*strings.Builder, styler, T)) error {
	if !o.textOutput(mode) {
		vs := make([]any, len(items))
		for i, it := range items {
			vs[i] = codeJSON(it)
		}
		return writeJSONL(o, vs)
	}
	var b strings.Builder
	st := styler{color: o.Color()}
	for _, it := range items {
		text(&b, st, it)
	}
	_, err := io.WriteString(o.Out, b.String())
	return err
}

func writeJSONL(o *IO, vs []any) error {
	w := newRecordWriter(o.Out)
	for _, v := range vs {
		if err := w.Write(v); err != nil {
			return err
		}
	}
	return w.Flush()
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

func cmpStr(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// codeJSON turns a result of the code index into its JSONL form: the
// same fields in snake_case (an embedded card's fields at the top), with
// empty ones left out; extra pairs of name and value are added.
func codeJSON(v any, extra ...any) map[string]any {
	m, _ := jsonValue(reflect.ValueOf(v)).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	for i := 0; i+1 < len(extra); i += 2 {
		name := extra[i].(string)
		switch x := extra[i+1].(type) {
		case time.Duration:
			m[name+"_ms"] = x.Milliseconds()
		default:
			m[name] = x
		}
	}
	return m
}

var timeType = reflect.TypeFor[time.Time]()

func jsonValue(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return jsonValue(v.Elem())
	case reflect.Struct:
		if v.Type() == timeType {
			t := v.Interface().(time.Time)
			if t.IsZero() {
				return nil
			}
			return t.UTC().Format(time.RFC3339)
		}
		m := map[string]any{}
		addFields(m, v)
		return m
	case reflect.Slice, reflect.Array:
		if v.Len() == 0 {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = jsonValue(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.Len() == 0 {
			return nil
		}
		out := map[string]any{}
		it := v.MapRange()
		for it.Next() {
			out[fmt.Sprint(it.Key().Interface())] = jsonValue(it.Value())
		}
		return out
	case reflect.Int64:
		if v.Type() == reflect.TypeFor[time.Duration]() {
			return time.Duration(v.Int()).Milliseconds()
		}
	}
	if v.CanInterface() {
		return v.Interface()
	}
	return nil
}

// addFields adds a struct's exported fields to m, those of an embedded
// struct in place.
func addFields(m map[string]any, v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if f.Anonymous && fv.Kind() == reflect.Struct {
			addFields(m, fv)
			continue
		}
		if fv.Kind() == reflect.Func {
			continue
		}
		x := jsonValue(fv)
		if x == nil || x == "" || x == false {
			continue
		}
		name := snakeCase(f.Name)
		if f.Type.Kind() == reflect.Int64 && f.Type == reflect.TypeFor[time.Duration]() {
			name += "_ms"
		}
		m[name] = x
	}
}

// snakeCase turns a Go field name into a JSON one: EndLine → end_line.
func snakeCase(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])) {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
