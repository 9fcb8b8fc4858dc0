package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

// Shells are the shells Completion writes scripts for.
var Shells = []string{"bash", "zsh", "fish"}

// completionFlag is the hidden --completion=SHELL of every command: it
// prints the command's completion script, made from its grammar, and
// exits. It acts before the arguments are checked, as --help does.
type completionFlag string

func (completionFlag) BeforeReset(app *kong.Kong, ctx *kong.Context, p *kong.Path) error {
	shell := fmt.Sprint(ctx.Value(p).Interface())
	if err := Completion(app.Stdout, shell, app.Model.Name, app.Model.Node); err != nil {
		return err
	}
	app.Exit(0)
	return nil
}

// Completion writes the completion script of command, whose grammar is
// node, for shell (bash, zsh or fish).
func Completion(w io.Writer, shell, command string, node *kong.Node) error {
	switch shell {
	case "bash":
		return bashCompletion(w, command, node)
	case "zsh":
		return zshCompletion(w, command, node)
	case "fish":
		return fishCompletion(w, command, node)
	}
	return fmt.Errorf("--completion: %q is not one of %s", shell, strings.Join(Shells, ", "))
}

// compFlag is what completion needs of a flag.
type compFlag struct {
	names []string // --long, -s, --no-long
	help  string   // first sentence
	value string   // "" for a switch, else the placeholder
	enum  []string
	dir   bool // the value is a directory
	file  bool // the value is a file
}

func flagsOf(n *kong.Node) []compFlag {
	var out []compFlag
	for _, f := range n.Flags {
		if f.Hidden {
			continue
		}
		c := compFlag{names: []string{"--" + f.Name}, help: firstSentence(f.Help)}
		if f.Short != 0 {
			c.names = append(c.names, "-"+string(f.Short))
		}
		if f.Tag.Negatable != "" {
			c.names = append(c.names, "--no-"+f.Name)
		}
		if !f.IsBool() && !f.IsCounter() {
			c.value = f.PlaceHolder
			if c.value == "" {
				c.value = strings.ToUpper(f.Name)
			}
			if f.Enum != "" {
				for _, e := range strings.Split(f.Enum, ",") {
					c.enum = append(c.enum, strings.TrimSpace(e))
				}
			}
			c.dir = c.value == "DIR"
			c.file = c.value == "FILE" || c.value == "PATH" || strings.HasSuffix(c.value, "FILE")
		}
		out = append(out, c)
	}
	return out
}

// subcommands are n's visible children.
func subcommands(n *kong.Node) []*kong.Node {
	var out []*kong.Node
	for _, c := range n.Children {
		if !c.Hidden {
			out = append(out, c)
		}
	}
	return out
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(s, ".")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// funcName turns a command's name into a shell function name.
func funcName(command string) string {
	return "_" + strings.NewReplacer("-", "_", ".", "_").Replace(command)
}

func bashCompletion(w io.Writer, command string, node *kong.Node) error {
	fn := funcName(command)
	subs := subcommands(node)
	var b strings.Builder
	fmt.Fprintf(&b, "# bash completion for %s, made by %s --completion=bash\n", command, command)
	fmt.Fprintf(&b, "%s() {\n", fn)
	b.WriteString("\tlocal cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" sub=\"\" i\n")
	if len(subs) > 0 {
		var names []string
		for _, s := range subs {
			names = append(names, s.Name)
		}
		b.WriteString("\tfor ((i = 1; i < COMP_CWORD; i++)); do\n")
		fmt.Fprintf(&b, "\t\tcase \"${COMP_WORDS[i]}\" in %s) sub=\"${COMP_WORDS[i]}\"; break ;; esac\n", strings.Join(names, "|"))
		b.WriteString("\tdone\n")
	}
	// Values of flags: every node's, since a flag's name means one thing
	// throughout a command.
	all := flagsOf(node)
	for _, s := range subs {
		all = append(all, flagsOf(s)...)
	}
	b.WriteString("\tcase \"$prev\" in\n")
	seen := map[string]bool{}
	for _, f := range all {
		if f.value == "" || seen[f.names[0]] {
			continue
		}
		seen[f.names[0]] = true
		names := slices.DeleteFunc(slices.Clone(f.names), func(n string) bool { return strings.HasPrefix(n, "--no-") })
		fmt.Fprintf(&b, "\t%s) ", strings.Join(names, "|"))
		switch {
		case len(f.enum) > 0:
			fmt.Fprintf(&b, "COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", strings.Join(f.enum, " "))
		case f.dir:
			b.WriteString("COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n")
		case f.file:
			b.WriteString("COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n")
		default:
			b.WriteString("return ;;\n")
		}
	}
	b.WriteString("\tesac\n")
	flagWords := func(n *kong.Node) string {
		var ws []string
		for _, f := range flagsOf(n) {
			ws = append(ws, f.names...)
		}
		return strings.Join(ws, " ")
	}
	b.WriteString("\tlocal flags\n\tcase \"$sub\" in\n")
	for _, s := range subs {
		fmt.Fprintf(&b, "\t%s) flags=%q ;;\n", s.Name, flagWords(node)+" "+flagWords(s))
	}
	fmt.Fprintf(&b, "\t*) flags=%q ;;\n\tesac\n", flagWords(node))
	b.WriteString("\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n")
	if len(subs) > 0 {
		var names []string
		for _, s := range subs {
			names = append(names, s.Name)
		}
		fmt.Fprintf(&b, "\telif [[ -z $sub ]]; then\n\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n", strings.Join(names, " "))
	}
	b.WriteString("\telse\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n\tfi\n}\n")
	fmt.Fprintf(&b, "complete -F %s %s\n", fn, command)
	_, err := io.WriteString(w, b.String())
	return err
}

// zshQuote escapes s for a description inside an _arguments spec.
func zshQuote(s string) string {
	return strings.NewReplacer("'", "'\\''", "[", "\\[", "]", "\\]", ":", "\\:").Replace(s)
}

func zshFlagSpecs(n *kong.Node) []string {
	var specs []string
	for _, f := range flagsOf(n) {
		action := ""
		if f.value != "" {
			switch {
			case len(f.enum) > 0:
				action = ":" + zshQuote(f.value) + ":(" + strings.Join(f.enum, " ") + ")"
			case f.dir:
				action = ":" + zshQuote(f.value) + ":_files -/"
			case f.file:
				action = ":" + zshQuote(f.value) + ":_files"
			default:
				action = ":" + zshQuote(f.value) + ": "
			}
		}
		for _, name := range f.names {
			eq := ""
			if f.value != "" && strings.HasPrefix(name, "--") && !strings.HasPrefix(name, "--no-") {
				eq = "="
			}
			act := action
			if strings.HasPrefix(name, "--no-") {
				act = ""
			}
			specs = append(specs, fmt.Sprintf("'%s%s[%s]%s'", name, eq, zshQuote(f.help), act))
		}
	}
	return specs
}

func zshCompletion(w io.Writer, command string, node *kong.Node) error {
	var b strings.Builder
	fmt.Fprintf(&b, "#compdef %s\n# zsh completion for %s, made by %s --completion=zsh\n\n", command, command, command)
	fn := funcName(command)
	fmt.Fprintf(&b, "%s() {\n", fn)
	subs := subcommands(node)
	specs := zshFlagSpecs(node)
	if len(subs) == 0 {
		fmt.Fprintf(&b, "\t_arguments -s \\\n\t\t%s \\\n\t\t'*:argument:_files'\n}\n", strings.Join(specs, " \\\n\t\t"))
	} else {
		b.WriteString("\tlocal curcontext=\"$curcontext\" state line\n")
		fmt.Fprintf(&b, "\t_arguments -C -s \\\n\t\t%s \\\n\t\t'1:command:->command' \\\n\t\t'*::argument:->argument'\n", strings.Join(specs, " \\\n\t\t"))
		b.WriteString("\tcase $state in\n\tcommand)\n\t\tlocal -a cmds=(\n")
		for _, s := range subs {
			fmt.Fprintf(&b, "\t\t\t'%s:%s'\n", s.Name, zshQuote(firstSentence(s.Help)))
		}
		b.WriteString("\t\t)\n\t\t_describe command cmds ;;\n\targument)\n\t\tcase $line[1] in\n")
		for _, s := range subs {
			fmt.Fprintf(&b, "\t\t%s) _arguments -s %s '*:argument:_files' ;;\n", s.Name, strings.Join(append(zshFlagSpecs(node), zshFlagSpecs(s)...), " "))
		}
		b.WriteString("\t\tesac ;;\n\tesac\n}\n")
	}
	fmt.Fprintf(&b, "\nif [ \"$funcstack[1]\" = \"%s\" ]; then\n\t%s \"$@\"\nelse\n\tcompdef %s %s\nfi\n", fn, fn, fn, command)
	_, err := io.WriteString(w, b.String())
	return err
}

// fishQuote quotes s for fish.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer("\\", "\\\\", "'", "\\'").Replace(s) + "'"
}

func fishCompletion(w io.Writer, command string, node *kong.Node) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# fish completion for %s, made by %s --completion=fish\n", command, command)
	subs := subcommands(node)
	var names []string
	for _, s := range subs {
		names = append(names, s.Name)
	}
	flags := func(n *kong.Node, cond string) {
		for _, f := range flagsOf(n) {
			var parts []string
			for _, name := range f.names {
				if l, ok := strings.CutPrefix(name, "--"); ok {
					parts = append(parts, "-l "+l)
				} else {
					parts = append(parts, "-s "+strings.TrimPrefix(name, "-"))
				}
			}
			line := "complete -c " + command + cond + " " + strings.Join(parts, " ") + " -d " + fishQuote(f.help)
			switch {
			case f.value == "":
			case len(f.enum) > 0:
				line += " -x -a " + fishQuote(strings.Join(f.enum, " "))
			case f.dir:
				line += " -x -a '(__fish_complete_directories)'"
			case f.file:
				line += " -r -F"
			default:
				line += " -x"
			}
			b.WriteString(line + "\n")
		}
	}
	flags(node, "")
	if len(subs) > 0 {
		for _, s := range subs {
			fmt.Fprintf(&b, "complete -c %s -f -n __fish_use_subcommand -a %s -d %s\n", command, s.Name, fishQuote(firstSentence(s.Help)))
			flags(s, " -n '__fish_seen_subcommand_from "+s.Name+"'")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
