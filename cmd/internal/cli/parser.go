package cli

import (
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/alecthomas/kong"
	buildversion "github.com/miramem/mira/cmd/internal/version"
)

// parser is kong's model of one command's grammar, built for a set of
// defaults (the configuration's variables).
type parser struct {
	k       *kong.Kong
	grammar any // the struct k parses into
	// getenv is the environment of the command being parsed: a served
	// recall runs in the watcher's process with the client's environment.
	getenv func(string) string
	// mu is held by the command that uses the parser, from parsing to its
	// end: the grammar is its flags.
	mu sync.Mutex
}

// globalFlags are the flags every command has beside its grammar's.
type globalFlags struct {
	Version    kong.VersionFlag `help:"Print the version (module version and VCS revision) and exit." group:"global"`
	Completion completionFlag   `help:"Print the shell completion script (bash, zsh or fish) and exit." hidden:"" placeholder:"SHELL"`
}

// globalGroup gathers the flags every command shares, shown apart from
// the command's own in --help.
var globalGroup = kong.Group{Key: "global", Title: "Global flags:"}

func newParser(name, description string, grammar any, vars kong.Vars, o *IO) (*parser, error) {
	p := &parser{grammar: grammar, getenv: o.Getenv}
	vars = vars.CloneWith(kong.Vars{"version": buildversion.Line(name)})
	k, err := kong.New(grammar,
		kong.Name(name),
		kong.Description(description),
		kong.Vars(vars),
		kong.Embed(&globalFlags{}),
		kong.ExplicitGroups([]kong.Group{globalGroup}),
		kong.Writers(o.Out, o.Err),
		kong.Exit(func(c int) { panic(kongExit{c}) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: false}),
		kong.UsageOnError(),
		kong.Help(helpWithExamples(name)),
		kong.Resolvers(kong.ResolverFunc(p.resolveEnv)),
	)
	p.k = k
	return p, err
}

// resolveEnv gives a flag the value of its environment variable as the
// command's environment has it. Kong reads its own process's variables;
// for a command run in this process they are the same, and for a served
// one this puts the client's in their place: its value when it has one,
// else the default even where the serving process has a value.
func (p *parser) resolveEnv(_ *kong.Context, _ *kong.Path, f *kong.Flag) (any, error) {
	if len(f.Tag.Envs) == 0 {
		return nil, nil
	}
	for _, e := range f.Tag.Envs {
		if v := p.getenv(e); v != "" {
			return v, nil
		}
	}
	for _, e := range f.Tag.Envs {
		if _, set := os.LookupEnv(e); set && f.HasDefault {
			return f.Default, nil
		}
	}
	return nil, nil
}

// parsers keeps the parsers of a process that runs many commands (the
// recall server). Building one reflects over the grammar's fields and
// interpolates every tag: half a millisecond, as long as a BM25 search.
type parsers struct {
	mu sync.Mutex
	m  map[string]*parser
}

// get returns the parser for the command and defaults, locked for the
// caller, building it from grammar the first time. The caller parses
// into p.grammar, not into grammar.
func (ps *parsers) get(name, description string, grammar any, vars kong.Vars, o *IO) (*parser, error) {
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name)
	for _, k := range keys {
		b.WriteString("\x00" + k + "=" + vars[k])
	}
	key := b.String()
	ps.mu.Lock()
	p := ps.m[key]
	if p == nil {
		var err error
		if p, err = newParser(name, description, grammar, vars, o); err != nil {
			ps.mu.Unlock()
			return nil, err
		}
		if ps.m == nil {
			ps.m = map[string]*parser{}
		}
		ps.m[key] = p
	}
	ps.mu.Unlock()
	p.mu.Lock()
	p.getenv = o.Getenv
	p.k.Stdout, p.k.Stderr = o.Out, o.Err
	return p, nil
}
