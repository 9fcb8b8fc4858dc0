package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/miramem/mira"
	"github.com/miramem/mira/agentloop"
	buildversion "github.com/miramem/mira/cmd/internal/version"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/paths"
	"github.com/miramem/mira/llm"
	"github.com/miramem/mira/summarize"
)

// Commands are Mira's programs, with what each does in a line, as the
// mira command lists them.
var Commands = []struct{ Name, Summary string }{
	{"remember", "store memories (arguments, stdin, --jsonl; --extract for facts from turns)"},
	{"recall", "find memories: hybrid retrieval, ranked JSONL records"},
	{"context", "plan a token-budgeted context block for a prompt"},
	{"summarize", "roll turns and facts into L1/L2/L3 summaries; evict the oldest"},
	{"forget", "tombstone memories by id"},
	{"index", "look at, rebuild or watch the disposable search index"},
	{"code", "code intelligence: definitions, call graph, module map, history, touchpoints"},
	{"agent", "the coding agent with one never-ending conversation"},
	{"mcp", "serve the memory to MCP hosts (stdio or HTTP)"},
	{"proxy", "memory for any OpenAI-compatible client"},
	{"sync", "share the store through a git remote"},
}

// miraBuiltins are what mira does itself, not through a mira-<cmd>.
var miraBuiltins = []struct{ Name, Summary string }{
	{"home", "print the store's directory"},
	{"config", "print the effective configuration and where each value comes from"},
}

// Mira is the mira command: `mira CMD ARGS…` runs mira-CMD with ARGS (the
// program beside mira, else on $PATH), as git runs its commands; mira
// alone lists them. It returns only when it could not run the command.
func Mira(args []string, o *IO) int {
	o.progName = "mira"
	if len(args) == 0 {
		miraUsage(o)
		return ExitOK
	}
	switch a := args[0]; {
	case a == "-h" || a == "--help" || a == "help" && len(args) == 1:
		miraUsage(o)
		return ExitOK
	case a == "help":
		return runCommand(o, "mira-"+args[1], []string{"--help"})
	case a == "--version":
		fmt.Fprintln(o.Out, buildversion.Line("mira"))
		return ExitOK
	case strings.HasPrefix(a, "--completion"):
		shell := strings.TrimPrefix(strings.TrimPrefix(a, "--completion"), "=")
		if shell == "" && len(args) > 1 {
			shell = args[1]
		}
		return miraCompletion(o, shell)
	case a == "home":
		return Main("mira home", "Print the directory of the Mira store the commands use: --home, else $MIRA_HOME, else the config file's home, else $XDG_DATA_HOME/mira.", &homeCmd{}, args[1:], o)
	case a == "config":
		return Main("mira config", "Print the effective configuration: each setting's value and where it comes from (flag, environment, config file and line, or default).", &configCmd{}, args[1:], o)
	case strings.HasPrefix(a, "-"):
		o.Warnf("unknown flag %s", a)
		o.Warnf("hint: see mira --help")
		return ExitUsage
	}
	return runCommand(o, "mira-"+args[0], args[1:])
}

func miraUsage(o *IO) {
	fmt.Fprintf(o.Out, "Usage: mira <command> [args...]\n\nMira is a file-first, plain-text memory for LLM agents. Each command is\nalso a program of its own: mira recall runs mira-recall.\n\nCommands:\n")
	w := tabwriter.NewWriter(o.Out, 0, 0, 2, ' ', 0)
	for _, c := range Commands {
		fmt.Fprintf(w, "  %s\t%s\n", c.Name, c.Summary)
	}
	for _, c := range miraBuiltins {
		fmt.Fprintf(w, "  %s\t%s\n", c.Name, c.Summary)
	}
	w.Flush()
	if more := otherCommands(); len(more) > 0 {
		fmt.Fprintf(o.Out, "\nOther commands found: %s\n", strings.Join(more, ", "))
	}
	fmt.Fprintf(o.Out, "\nmira <command> --help shows a command's options; man mira gives the overview.\nmira --version prints the version.\n")
}

// otherCommands lists the mira-<cmd> programs beside mira and on $PATH
// that Commands does not know (a newer command, or one of the user's).
func otherCommands() []string {
	known := map[string]bool{}
	for _, c := range Commands {
		known[c.Name] = true
	}
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	dirs = append(dirs, filepath.SplitList(os.Getenv("PATH"))...)
	var out []string
	for _, d := range dirs {
		matches, _ := filepath.Glob(filepath.Join(d, "mira-*"))
		for _, m := range matches {
			name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "mira-"), ".exe")
			if fi, err := os.Stat(m); err != nil || !fi.Mode().IsRegular() || known[name] || strings.ContainsAny(name, ".") {
				continue
			}
			known[name] = true
			out = append(out, name)
		}
	}
	return out
}

// runCommand runs program with args in this process's place.
func runCommand(o *IO, program string, args []string) int {
	path, err := findProgram(program)
	if err != nil {
		o.Warnf("%s is not a mira command (%v)", strings.TrimPrefix(program, "mira-"), err)
		o.Warnf("hint: see mira --help for the commands")
		return ExitUsage
	}
	err = execProgram(path, append([]string{program}, args...))
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		o.Warnf("cannot run %s: %v", path, err)
		return ExitFailure
	}
	return ExitOK
}

// findProgram looks for program beside the mira being run, then on $PATH:
// an installed mira runs the commands installed with it.
func findProgram(program string) (string, error) {
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			dirs = append(dirs, filepath.Dir(r))
		}
	}
	for _, d := range dirs {
		for _, name := range []string{program, program + ".exe"} {
			p := filepath.Join(d, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && (fi.Mode()&0o111 != 0 || strings.HasSuffix(name, ".exe")) {
				return p, nil
			}
		}
	}
	p, err := exec.LookPath(program)
	if err != nil {
		return "", fmt.Errorf("no %s beside mira or on $PATH", program)
	}
	return p, nil
}

// miraCompletion writes the completion script of the mira command: its
// commands, and for the arguments after one the completion of that
// command's own program.
func miraCompletion(o *IO, shell string) int {
	var names []string
	for _, c := range Commands {
		names = append(names, c.Name)
	}
	for _, c := range miraBuiltins {
		names = append(names, c.Name)
	}
	words := strings.Join(names, " ")
	switch shell {
	case "bash":
		fmt.Fprintf(o.Out, `# bash completion for mira, made by mira --completion=bash
_mira() {
	local cur="${COMP_WORDS[COMP_CWORD]}"
	if ((COMP_CWORD == 1)); then
		COMPREPLY=($(compgen -W %q -- "$cur"))
		return
	fi
	local cmd="mira-${COMP_WORDS[1]}" fn="_mira_${COMP_WORDS[1]}"
	if ! declare -F "$fn" >/dev/null && declare -F _completion_loader >/dev/null; then
		_completion_loader "$cmd"
	fi
	if declare -F "$fn" >/dev/null; then
		COMP_WORDS=("$cmd" "${COMP_WORDS[@]:2}")
		((COMP_CWORD--))
		"$fn"
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -F _mira mira
`, words+" --help --version")
	case "zsh":
		fmt.Fprintf(o.Out, "#compdef mira\n# zsh completion for mira, made by mira --completion=zsh\n\n_mira() {\n\tlocal -a cmds=(\n")
		for _, c := range append(append([]struct{ Name, Summary string }{}, Commands...), miraBuiltins...) {
			fmt.Fprintf(o.Out, "\t\t'%s:%s'\n", c.Name, zshQuote(c.Summary))
		}
		fmt.Fprintf(o.Out, "\t)\n\tif (( CURRENT == 2 )); then\n\t\t_describe command cmds\n\telse\n\t\tlocal cmd=mira-$words[2]\n\t\tshift words\n\t\t(( CURRENT-- ))\n\t\twords[1]=$cmd\n\t\t_normal\n\tfi\n}\n\nif [ \"$funcstack[1]\" = \"_mira\" ]; then\n\t_mira \"$@\"\nelse\n\tcompdef _mira mira\nfi\n")
	case "fish":
		fmt.Fprintf(o.Out, "# fish completion for mira, made by mira --completion=fish\ncomplete -c mira -l help -d 'Show help'\ncomplete -c mira -l version -d 'Print the version'\n")
		for _, c := range append(append([]struct{ Name, Summary string }{}, Commands...), miraBuiltins...) {
			fmt.Fprintf(o.Out, "complete -c mira -f -n __fish_use_subcommand -a %s -d %s\n", c.Name, fishQuote(c.Summary))
		}
		fmt.Fprintf(o.Out, "complete -c mira -n 'not __fish_use_subcommand' -a '(set -l t (commandline -opc) (commandline -ct); set t[1] mira-$t[2]; set -e t[2]; complete -C \"$t\")'\n")
	default:
		o.Warnf("--completion: %q is not one of %s", shell, strings.Join(Shells, ", "))
		return ExitUsage
	}
	return ExitOK
}

// homeCmd is `mira home`.
type homeCmd struct {
	Home string `help:"Memory store directory." env:"MIRA_HOME" default:"${home}" placeholder:"DIR" group:"global"`
}

func (c *homeCmd) run(_ context.Context, o *IO) error {
	fmt.Fprintln(o.Out, c.Home)
	return nil
}

// configCmd is `mira config`.
type configCmd struct {
	Home string `help:"Memory store directory." env:"MIRA_HOME" default:"${home}" placeholder:"DIR" group:"global"`
}

// setting is one configuration value as mira config shows it.
type setting struct {
	key     string   // as the config file writes it
	envs    []string // environment variables that beat the file, in order
	after   []string // environment variables the file beats
	def     string   // the built-in default
	secret  bool     // shown as set or not, never its value
	flagged bool     // --home given
	// zeroKeeps: a 0 in the file keeps the built-in default.
	zeroKeeps bool
}

func (c *configCmd) run(_ context.Context, o *IO) error {
	cfg := o.config()
	getenv := o.Getenv
	homeFlag := c.Home != "" && c.Home != getenv("MIRA_HOME") && c.Home != defaultHome(cfg, getenv)
	w := tabwriter.NewWriter(o.Out, 0, 0, 2, ' ', 0)
	switch {
	case cfg.Lines != nil:
		fmt.Fprintf(w, "# config file\t%s\t\n", cfg.Path)
	case cfg.Path != "":
		fmt.Fprintf(w, "# config file\t(none: no %s)\t\n", cfg.Path)
	default:
		fmt.Fprintf(w, "# config file\t(none)\t\n")
	}
	for _, s := range settings(getenv) {
		v, src := s.resolve(cfg, getenv)
		if s.key == "home" && homeFlag {
			v, src = c.Home, "flag --home"
		}
		if s.secret && v != "" {
			v = "(set)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", s.key, v, src)
	}
	// prices names models, each a row of its own.
	models := slices.Sorted(maps.Keys(cfg.Prices))
	if len(models) == 0 {
		fmt.Fprintf(w, "prices\t(none: /status shows no cost)\tdefault\n")
	} else {
		fmt.Fprintf(w, "prices\t%s\t%s\n", strings.Join(models, ", "), configSource(cfg, "prices"))
	}
	for _, m := range models {
		p := cfg.Prices[m]
		fmt.Fprintf(w, "prices.%s\tinput %s, cached_input %s, output %s\t%s\n", m, formatFloat(p.Input), formatFloat(p.CachedInput), formatFloat(p.Output), configSource(cfg, "prices."+m))
	}
	return w.Flush()
}

// settings are the configuration's keys (but prices) as mira config lists
// them, in the order of mira.Config, with their built-in defaults.
func settings(getenv func(string) string) []setting {
	f := formatFloat
	n := strconv.Itoa
	light, heavy, off := plan.ModeLight.Defaults(), plan.ModeHeavy.Defaults(), plan.ModeOff.Defaults()
	return []setting{
		{key: "home", envs: []string{"MIRA_HOME"}, def: paths.DefaultHome(getenv)},
		{key: "output", def: "auto"},
		{key: "lock_timeout", def: "10s"},
		{key: "embed.name", envs: []string{"MIRA_EMBED"}, def: mira.BuiltinEmbedder},
		{key: "embed.base_url", envs: []string{"MIRA_EMBED_BASE_URL"}, after: []string{"OPENAI_BASE_URL"}, def: "https://api.openai.com/v1"},
		{key: "embed.api_key", envs: []string{"MIRA_EMBED_API_KEY"}, after: []string{"OPENAI_API_KEY"}, secret: true},
		{key: "rerank.base_url", envs: []string{"MIRA_RERANK_BASE_URL"}, def: "(none: no reranking)"},
		{key: "rerank.model", envs: []string{"MIRA_RERANK_MODEL"}},
		{key: "rerank.api_key", envs: []string{"MIRA_RERANK_API_KEY"}, secret: true},
		{key: "recall.k", def: "10", zeroKeeps: true},
		{key: "recall.mode", def: "hybrid"},
		{key: "recall.recency_weight", def: f(index.DefaultRanking.Recency)},
		{key: "recall.recency_days", def: f(index.DefaultRanking.RecencyDays)},
		{key: "recall.mmr_lambda", def: f(index.DefaultRanking.MMRLambda)},
		{key: "recall.min_score", def: f(index.DefaultRanking.MinScore)},
		{key: "recall.serve", envs: []string{"MIRA_SERVE"}, def: "true"},
		{key: "recall.serve_idle", def: mira.DefaultServeIdle.String()},
		{key: "llm.model", envs: []string{"MIRA_MODEL"}, def: "(none: extractive summaries, no --extract, no agent)"},
		{key: "llm.base_url", envs: []string{"OPENAI_BASE_URL"}, def: "https://api.openai.com/v1"},
		{key: "llm.api_key", envs: []string{"OPENAI_API_KEY"}, secret: true},
		{key: "llm.timeout", def: llm.DefaultTimeout.String()},
		{key: "context.mode", def: "light"},
		{key: "context.encoding", def: plan.DefaultEncoding},
		{key: "context.log", def: "false"},
		{key: "context.budget.off", def: n(off.Budget), zeroKeeps: true},
		{key: "context.budget.light", def: n(light.Budget), zeroKeeps: true},
		{key: "context.budget.heavy", def: n(heavy.Budget), zeroKeeps: true},
		{key: "context.code.cards.light", def: n(light.CodeCards), zeroKeeps: true},
		{key: "context.code.cards.heavy", def: n(heavy.CodeCards), zeroKeeps: true},
		{key: "context.code.lines.light", def: n(light.ExcerptLines), zeroKeeps: true},
		{key: "context.code.lines.heavy", def: n(heavy.ExcerptLines), zeroKeeps: true},
		{key: "context.code.map.light", def: n(light.MapTokens), zeroKeeps: true},
		{key: "context.code.map.heavy", def: n(heavy.MapTokens), zeroKeeps: true},
		{key: "summarize.max_entries", def: n(summarize.DefaultMaxEntries), zeroKeeps: true},
		{key: "remember.max_bytes", def: n(mira.DefaultMaxBytes), zeroKeeps: true},
		{key: "sync.remote", def: "origin"},
		{key: "sync.branch", def: "main"},
		{key: "sync.scopes", def: "(every scope)"},
		{key: "sync.turns", def: "false"},
		{key: "agent.conversation", envs: []string{"MIRA_CONVERSATION"}, def: agentloop.DefaultConversation},
		{key: "agent.max_steps", def: n(agentloop.DefaultMaxSteps), zeroKeeps: true},
		{key: "agent.buffer_tokens", def: n(agentloop.DefaultBufferTokens), zeroKeeps: true},
		{key: "agent.context_budget", def: n(agentloop.DefaultContextBudget), zeroKeeps: true},
		{key: "agent.recall_k", def: n(agentloop.DefaultRecallK), zeroKeeps: true},
		{key: "agent.effort", def: "auto"},
		{key: "agent.summarizer", def: "model"},
		{key: "agent.allow", def: "(none: write_file, edit_file and bash ask first)"},
		{key: "agent.allow_git_config", def: "false"},
		{key: "agent.extract", def: "true"},
		{key: "agent.plan_log", def: "true"},
		{key: "agent.plan_log_mib", def: n(mira.DefaultPlanLogMiB), zeroKeeps: true},
	}
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// configSource names the file and line that set key.
func configSource(cfg *Config, key string) string {
	return fmt.Sprintf("file %s:%d", cfg.Path, cfg.Lines[key])
}

// resolve returns the setting's value and where it comes from.
func (s setting) resolve(cfg *Config, getenv func(string) string) (string, string) {
	for _, e := range s.envs {
		if v := getenv(e); v != "" {
			return v, "env " + e
		}
	}
	if v, ok := mira.ConfigValue(cfg, s.key); ok {
		if s.zeroKeeps && v == "0" {
			return s.def, configSource(cfg, s.key) + " (0 keeps the default)"
		}
		return v, configSource(cfg, s.key)
	}
	for _, e := range s.after {
		if v := getenv(e); v != "" {
			return v, "env " + e
		}
	}
	return s.def, "default"
}
