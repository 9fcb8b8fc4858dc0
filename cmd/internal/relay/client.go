package relay

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/miramem/mira/cmd/internal/version"
	"github.com/miramem/mira/internal/paths"
	"golang.org/x/term"
)

// Run asks the server of the store that args name to run command with
// them, copies its output to stdout and stderr, and returns its exit
// status. ok is false when the command is to run here instead: nothing
// serves the store, the arguments need the client's own process (--help,
// files named relative to its directory), or the server went away before
// it said anything.
func Run(command string, args []string) (code int, ok bool) {
	return run(command, "", args)
}

// run is Run that, when nothing serves the store and the user has not
// said otherwise (see ServeWanted), first starts target (mira-index)
// serving it in the background, as Start does, and asks it.
func run(command, target string, args []string) (code int, ok bool) {
	if !forwardable(args) {
		return 0, false
	}
	cfg := &clientConfig{getenv: os.Getenv}
	home, ok := storeDir(args, cfg)
	if !ok {
		return 0, false
	}
	sock := Socket(home)
	if len(sock) > MaxSocketPath {
		return 0, false
	}
	conn, err := dial(sock)
	if err != nil && target != "" && serveWanted(cfg) {
		conn, err = Start(home, target)
	}
	if err != nil {
		return 0, false // no server: the command runs here
	}
	defer conn.Close()
	dir, err := os.Getwd()
	if err != nil {
		return 0, false
	}
	req := Request{
		Command: command, Args: args, Dir: dir, Env: os.Environ(),
		OutTTY: term.IsTerminal(int(os.Stdout.Fd())), ErrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
	if _, err := conn.Write(append(appendRequest(nil, req), '\n')); err != nil {
		return 0, false
	}
	r := bufio.NewReaderSize(conn, 64<<10)
	started := false
	for {
		kind, p, err := ReadFrame(r)
		if err != nil {
			if !started {
				return 0, false
			}
			fmt.Fprintf(os.Stderr, "%s: the index watcher stopped answering: %v\n", command, err)
			return 1, true
		}
		started = true
		switch kind {
		case Stdout:
			os.Stdout.Write(p) // a closed pipe ends the process quietly, as it would the command
		case Stderr:
			os.Stderr.Write(p)
		case Exit:
			code, err := strconv.Atoi(string(p))
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: the index watcher sent a bad exit status %q\n", command, p)
				return 1, true
			}
			return code, true
		default:
			fmt.Fprintf(os.Stderr, "%s: the index watcher sent a frame of unknown kind %q\n", command, kind)
			return 1, true
		}
	}
}

// forwardable reports whether the server can run args as well as this
// process: not help (kong prints it for this process's terminal width),
// not --completion (which starts no server) and not --eval, whose files
// are named relative to the client.
func forwardable(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
		switch {
		case a == "-h", a == "--help", strings.HasPrefix(a, "--eval"), strings.HasPrefix(a, "--completion"):
			return false
		}
	}
	return true
}

// clientConfig is the configuration file as the client reads it: once,
// and only when something needs it.
type clientConfig struct {
	getenv func(string) string
	read   bool
	data   []byte
	err    error
}

func (c *clientConfig) bytes() ([]byte, error) {
	if !c.read {
		c.read = true
		if p, _ := paths.ConfigFile(c.getenv); p != "" {
			c.data, c.err = os.ReadFile(p)
			if os.IsNotExist(c.err) {
				c.data, c.err = nil, nil
			}
		}
	}
	return c.data, c.err
}

// storeDir finds the store the command would use, as the full command
// does: --home, else $MIRA_HOME, else the configuration file's home,
// else the default. ok is false when that is not an absolute path (the
// server's working directory is not the client's) or is not certain.
func storeDir(args []string, cfg *clientConfig) (string, bool) {
	raw, found := "", false // the --home flag's value
	for i := 0; i < len(args) && !found; i++ {
		a := args[i]
		switch {
		case a == "--":
			i = len(args)
		case a == "--home":
			if i+1 >= len(args) {
				return "", false
			}
			raw, found = args[i+1], true
		case strings.HasPrefix(a, "--home="):
			raw, found = strings.TrimPrefix(a, "--home="), true
		}
	}
	raw, err := paths.Home(raw, cfg.getenv, func() (string, error) {
		b, err := cfg.bytes()
		if err != nil || b == nil {
			return "", err
		}
		h, ok := configHome(b)
		if !ok {
			return "", errUncertain // the command reads it
		}
		return h, nil
	})
	if err != nil {
		return "", false
	}
	if raw == "" || !(filepath.IsAbs(raw) || strings.HasPrefix(raw, "~/")) {
		return "", false
	}
	home, err := paths.ExpandHome(raw)
	return home, err == nil
}

// ServeEnv turns the start of a server on demand off (0, false, no, off)
// or on (anything else) for one environment, beating the configuration's
// recall.serve.
// An empty value is no setting.
const ServeEnv = "MIRA_SERVE"

// serveWanted reports whether a recall that nothing answers may start a
// server: $MIRA_SERVE, else the configuration's recall.serve (default
// true). A configuration the client cannot read for certain starts none.
func serveWanted(cfg *clientConfig) bool {
	if v := cfg.getenv(ServeEnv); v != "" {
		return !ServeOff(v)
	}
	b, err := cfg.bytes()
	if err != nil {
		return false
	}
	on, ok := configServe(b)
	return on && ok
}

// ServeOff reports whether a value of $MIRA_SERVE turns serving off.
func ServeOff(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "no", "off":
		return true
	}
	return false
}

// Main is the main of a command's small client: it runs command through
// the store's server, or else has target (mira-index) run it in this
// process's place, and returns the exit status when it could do neither.
func Main(command, target string) int {
	if version.Requested(os.Args[1:]) {
		fmt.Println(version.Line(command))
		return 0
	}
	code, ok := run(command, target, os.Args[1:])
	return orExec(command, target, code, ok)
}

// Forward is Main for a command that never starts a server (a writer:
// the first remember of a day should not wait for an index to be built):
// it asks a server that is already running, else runs the full command.
func Forward(command, target string) int {
	if version.Requested(os.Args[1:]) {
		fmt.Println(version.Line(command))
		return 0
	}
	code, ok := Run(command, os.Args[1:])
	return orExec(command, target, code, ok)
}

// orExec returns a served command's status, or runs the full command in
// this process's place when nothing served it (returning only if that
// fails).
func orExec(command, target string, code int, served bool) int {
	if served {
		return code
	}
	err := Exec(target, command, os.Args[1:])
	fmt.Fprintf(os.Stderr, "%s: %v\n", command, err)
	return 1
}

// errUncertain is a configuration whose home only the full command can
// read for certain.
var errUncertain = errors.New("home not certain")
