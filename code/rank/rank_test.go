package rank

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"getHTTPServer_v2", []string{"get", "http", "server", "v", "2"}},
		{"ExecuteC", []string{"execute", "c"}},
		{"bash_completions", []string{"bash", "completions"}},
		{"utf8Decode", []string{"utf", "8", "decode"}},
		{"HTTPServer", []string{"http", "server"}},
		{"IOError", []string{"io", "error"}},
		{"__init__", []string{"init"}},
		{"src/flask/app", []string{"src", "flask", "app"}},
		{"straße", []string{"straße"}},
		{"", nil},
	} {
		if got := Split(tc.in); !cmp.Equal(got, tc.want) {
			t.Errorf("Split(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestQueryTerms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		// Stop words dropped, words stemmed, compounds split and kept whole.
		{"Persistent flags should also be used in completions",
			[]string{"persist", "flag", "complet"}},
		{"Creates the ExecuteC function", []string{"creat", "execut", "executec"}},
		{"fix bash_completions for zsh", []string{"fix", "bash", "complet", "bashcompletions", "zsh"}},
		{"the a of", nil},
	} {
		if got := QueryTerms(tc.in); !cmp.Equal(got, tc.want) {
			t.Errorf("QueryTerms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// tiny is a small project: a command type, its flags, completions that
// use both, and a README-like file with many words.
func tiny() []input {
	return []input{
		{path: "command.go", lang: "go",
			text: []byte("package cobra\n// Command is a command.\ntype Command struct{}\nfunc (c *Command) Execute() error { return c.run() }\nfunc (c *Command) run() error { return nil }\n"),
			syms: []symIn{
				{Kind: "struct", Name: "Command", Doc: "Command is a command.", Line: 3},
				{Kind: "method", Name: "Execute", Parent: "Command", Signature: "func (c *Command) Execute() error", Line: 4},
				{Kind: "method", Name: "run", Parent: "Command", Signature: "func (c *Command) run() error", Line: 5},
			},
			refs: []refIn{{"run"}}},
		{path: "flags.go", lang: "go",
			text: []byte("package cobra\n// PersistentFlags returns the persistent flag set.\nfunc (c *Command) PersistentFlags() *FlagSet { return c.pflags }\n"),
			syms: []symIn{{Kind: "method", Name: "PersistentFlags", Parent: "Command", Doc: "PersistentFlags returns the persistent flag set.", Signature: "func (c *Command) PersistentFlags() *FlagSet", Line: 3}},
			refs: []refIn{{"Command"}, {"FlagSet"}}},
		{path: "bash_completions.go", lang: "go",
			text: []byte("package cobra\n// genCompletion writes the completion script.\nfunc genCompletion(c *Command) { for _, f := range c.PersistentFlags() { write(f) } }\n"),
			syms: []symIn{{Kind: "func", Name: "genCompletion", Doc: "genCompletion writes the completion script.", Signature: "func genCompletion(c *Command)", Line: 3}},
			refs: []refIn{{"Command"}, {"PersistentFlags"}, {"write"}}},
		{path: "doc/man.go", lang: "go",
			text: []byte("package doc\n// GenMan writes a man page. A man page lists the command, its flags and flags and flags.\nfunc GenMan(c *cobra.Command) { write(c) }\n"),
			syms: []symIn{{Kind: "func", Name: "GenMan", Doc: "GenMan writes a man page.", Signature: "func GenMan(c *cobra.Command)", Line: 3}},
			refs: []refIn{{"Command"}, {"write"}}},
		{path: "util.go", lang: "go",
			text: []byte("package cobra\nfunc write(x any) {}\n"),
			syms: []symIn{{Kind: "func", Name: "write", Signature: "func write(x any)", Line: 2}}},
	}
}

func build(docs []input) *Model {
	m := New()
	for _, d := range docs {
		m.put(d)
	}
	return m
}

func paths(hits []FileHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Path)
	}
	return out
}

func TestFilesOrder(t *testing.T) {
	m := build(tiny())
	m.params.Graph = 0
	for _, tc := range []struct {
		q     string
		first string
	}{
		// The file defining the words' symbol beats files that only use it.
		{"persistent flags", "flags.go"},
		// Path words count.
		{"completion script", "bash_completions.go"},
		// A name given whole finds its definition.
		{"GenMan", "doc/man.go"},
		{"execute the command", "command.go"},
	} {
		got := paths(m.Files(Query{Text: tc.q}))
		if len(got) == 0 || got[0] != tc.first {
			t.Errorf("Files(%q) = %q, want %s first", tc.q, got, tc.first)
		}
	}
	if got := m.Files(Query{Text: "nothing matches zzyzx"}); len(got) != 0 {
		t.Errorf("Files(no match) = %v, want none", got)
	}
	if got := m.Files(Query{Text: "flags", K: 2}); len(got) != 2 {
		t.Errorf("Files(K: 2) gave %d hits", len(got))
	}
}

func TestFieldsWeighted(t *testing.T) {
	// Two files mention "router" equally often; in one it names a symbol.
	m := build([]input{
		{path: "a.go", text: []byte("router router"), syms: []symIn{{Kind: "func", Name: "Router"}}},
		{path: "b.go", text: []byte("router router xyz")},
		{path: "c.go", text: []byte("other words")},
	})
	got := paths(m.Files(Query{Text: "router"}))
	if want := []string{"a.go", "b.go"}; !cmp.Equal(got, want) {
		t.Errorf("Files(router) = %q, want %q", got, want)
	}
	m.params.Weight[fName] = 0
	m.params.SymbolBoost = 0
	m.params.Graph = 0
	// Without the name field, length normalisation decides: a.go is shorter.
	h := m.Files(Query{Text: "router"})
	if len(h) != 2 || h[0].Score <= h[1].Score {
		t.Errorf("Files(router) without names = %v", h)
	}
}

func TestNear(t *testing.T) {
	m := build(tiny())
	m.params.Graph = 0
	plain := m.Files(Query{Text: "persistent flags"})
	top := plain[0].Score
	// A file no word finds comes in with a near seed, bounded by the top score.
	got := m.Files(Query{Text: "persistent flags", Near: map[string]float64{"util.go": 1, "nowhere.go": 1}, Explain: true})
	var util *FileHit
	for i := range got {
		if got[i].Path == "util.go" {
			util = &got[i]
		}
	}
	if util == nil {
		t.Fatalf("Files with Near util.go = %q, want util.go in", paths(got))
	}
	if want := m.params.Near * top; math.Abs(util.Score-want) > 1e-9 {
		t.Errorf("near-only score = %v, want %v", util.Score, want)
	}
	if !strings.Contains(strings.Join(util.Why, ";"), "near") {
		t.Errorf("Why = %q, want a near seed", util.Why)
	}
	if got[0].Path != "flags.go" {
		t.Errorf("a near seed of weight 1 buried the best lexical hit: %q", paths(got))
	}
	// Near adds its weight's share of the bound.
	got = m.Files(Query{Text: "persistent flags", Near: map[string]float64{plain[1].Path: 0.5}})
	for _, h := range got {
		if h.Path == plain[1].Path {
			if want := plain[1].Score + 0.5*m.params.Near*top; math.Abs(h.Score-want) > 1e-9 {
				t.Errorf("%s with near 0.5: %v, want %v", h.Path, h.Score, want)
			}
		}
	}
	// With no query words, near seeds alone rank.
	got = m.Files(Query{Text: "", Near: map[string]float64{"util.go": 0.5, "command.go": 1}})
	if want := []string{"command.go", "util.go"}; !cmp.Equal(paths(got), want) {
		t.Errorf("Files(near only) = %q, want %q", paths(got), want)
	}
}

func TestGraphSpreadBounded(t *testing.T) {
	m := build(tiny())
	m.params.Graph = 0
	before := map[string]float64{}
	hits := m.Files(Query{Text: "completion script"})
	for _, h := range hits {
		before[h.Path] = h.Score
	}
	top := hits[0].Score
	m.params.Graph = 0.2
	after := m.Files(Query{Text: "completion script", Explain: true})
	reached := false
	for _, h := range after {
		d := h.Score - before[h.Path]
		if d < -1e-12 || d > m.params.Graph*top+1e-9 {
			t.Errorf("%s: graph added %v, want within [0, %v]", h.Path, d, m.params.Graph*top)
		}
		if before[h.Path] == 0 && d > 0 {
			reached = true
			if !strings.Contains(strings.Join(h.Why, ";"), "graph from bash_completions.go") {
				t.Errorf("%s: Why = %q, want the hop", h.Path, h.Why)
			}
		}
	}
	if !reached {
		t.Errorf("Files = %v: the spread reached no file the words missed", after)
	}
	// No seeds, no spread: the graph alone ranks nothing.
	if got := m.Files(Query{Text: "zzyzx"}); len(got) != 0 {
		t.Errorf("Files(zzyzx) = %v", got)
	}
	// Names defined in too many files carry no edge.
	m.params.MaxDefiners = 0
	for _, h := range m.Files(Query{Text: "completion script"}) {
		if h.Score != before[h.Path] {
			t.Errorf("%s: %v with MaxDefiners 0, want %v", h.Path, h.Score, before[h.Path])
		}
	}
}

// snapshot is every answer a model gives for some queries.
func snapshot(m *Model) string {
	var b strings.Builder
	for _, q := range []string{"persistent flags", "completion script", "GenMan", "execute the command", "Command.Execute", "write", "flg", "man page flags"} {
		for _, h := range m.Files(Query{Text: q, Explain: true}) {
			fmt.Fprintf(&b, "F %s %s %.9f %q\n", q, h.Path, h.Score, h.Why)
		}
		for _, h := range m.Symbols(Query{Text: q, Explain: true}) {
			fmt.Fprintf(&b, "S %s %s %d %s %.9f %q\n", q, h.Path, h.Index, h.Name, h.Score, h.Why)
		}
	}
	fmt.Fprintf(&b, "len %d paths %q\n", m.Len(), m.Paths())
	return b.String()
}

func TestIncrementalEqualsFresh(t *testing.T) {
	docs := tiny()
	fresh := build(docs)
	m := New()
	// Put in another order, with stale versions and files removed later,
	// through enough churn to compact more than once.
	for i := 0; i < 300; i++ {
		m.put(input{path: fmt.Sprintf("gone%d.go", i%7), text: []byte(fmt.Sprintf("flags completion %d zzz%d", i, i)),
			syms: []symIn{{Kind: "func", Name: fmt.Sprintf("Gone%d", i)}}, refs: []refIn{{"Command"}}})
		if i%3 == 0 {
			m.put(input{path: "command.go", text: []byte("stale text persistent"), syms: []symIn{{Kind: "func", Name: "Stale"}}})
		}
	}
	for i := len(docs) - 1; i >= 0; i-- {
		m.put(docs[i])
	}
	for i := 0; i < 7; i++ {
		m.Remove(fmt.Sprintf("gone%d.go", i))
	}
	m.Remove("not-there.go")
	m.put(docs[0])
	if d := cmp.Diff(snapshot(fresh), snapshot(m)); d != "" {
		t.Errorf("incremental model differs from a fresh build (-fresh +incremental):\n%s", d)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	m := build(tiny())
	m.Remove("util.go") // a dead file to compact away
	m.put(tiny()[4])
	want := snapshot(m)
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	n := New()
	if err := n.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	if d := cmp.Diff(want, snapshot(n)); d != "" {
		t.Errorf("decoded model differs (-want +got):\n%s", d)
	}
	// A decoded model goes on taking changes like the original.
	m.Remove("flags.go")
	n.Remove("flags.go")
	m.put(input{path: "new.go", text: []byte("persistent new"), syms: []symIn{{Kind: "func", Name: "New"}}})
	n.put(input{path: "new.go", text: []byte("persistent new"), syms: []symIn{{Kind: "func", Name: "New"}}})
	if d := cmp.Diff(snapshot(m), snapshot(n)); d != "" {
		t.Errorf("decoded model changed differently (-original +decoded):\n%s", d)
	}
	b2, _ := n.MarshalBinary()
	if err := New().UnmarshalBinary(b2); err != nil {
		t.Errorf("second round: %v", err)
	}
}

func TestDecodeDamaged(t *testing.T) {
	b, err := build(tiny()).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	m := build(tiny()[:1])
	want := snapshot(m)
	// Every truncation, and every byte flipped, gives an error or a model
	// that answers without panicking; a failed decode leaves the model alone.
	for i := 0; i < len(b); i++ {
		if err := m.UnmarshalBinary(b[:i]); err == nil {
			t.Fatalf("UnmarshalBinary(first %d of %d bytes) succeeded", i, len(b))
		} else if !errors.Is(err, errCorrupt) {
			t.Fatalf("UnmarshalBinary(first %d bytes) = %v, want errCorrupt", i, err)
		}
	}
	if got := snapshot(m); got != want {
		t.Errorf("a failed decode changed the model")
	}
	for i := 0; i < len(b); i++ {
		c := append([]byte(nil), b...)
		c[i] ^= 0xff
		n := New()
		if n.UnmarshalBinary(c) == nil {
			snapshot(n)
			n.Remove("command.go")
			n.put(tiny()[0])
			snapshot(n)
		}
	}
}

func TestSymbols(t *testing.T) {
	m := build(tiny())
	for _, tc := range []struct {
		q    string
		want string // first hit: Parent.Name or Name
	}{
		{"Execute", "Command.Execute"},
		{"execute", "Command.Execute"},
		{"Command.Execute", "Command.Execute"},
		{"persistent_flags", "Command.PersistentFlags"},
		{"PersistentFl", "Command.PersistentFlags"},
		{"pf", "Command.PersistentFlags"},
		{"gencompl", "genCompletion"},
		{"gnman", "GenMan"},
		{"writes the completion script", "genCompletion"},
	} {
		got := m.Symbols(Query{Text: tc.q})
		if len(got) == 0 {
			t.Errorf("Symbols(%q) = none, want %s", tc.q, tc.want)
			continue
		}
		name := got[0].Name
		if got[0].Parent != "" {
			name = got[0].Parent + "." + name
		}
		if name != tc.want {
			t.Errorf("Symbols(%q)[0] = %s, want %s (all: %v)", tc.q, name, tc.want, got)
		}
	}
	h := m.Symbols(Query{Text: "Execute"})[0]
	if h.Path != "command.go" || h.Index != 1 || h.Line != 4 || h.Kind != "method" {
		t.Errorf("Symbols(Execute)[0] = %+v, want command.go's symbol 1 at line 4", h)
	}
}
