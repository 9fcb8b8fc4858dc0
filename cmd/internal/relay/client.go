package relay

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
	if !forwardable(args) {
		return 0, false
	}
	home, ok := storeDir(args, os.Getenv)
	if !ok {
		return 0, false
	}
	sock := Socket(home)
	if len(sock) > MaxSocketPath {
		return 0, false
	}
	conn, err := dial(sock)
	if err != nil {
		return 0, false // no watcher, or one that does not serve
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
// process: not help (kong prints it for this process's terminal width)
// and not --eval, whose files are named relative to the client.
func forwardable(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return true
		}
		switch {
		case a == "-h", a == "--help", strings.HasPrefix(a, "--eval"):
			return false
		}
	}
	return true
}

// storeDir finds the store the command would use, as the full command
// does: --home, else $MIRA_HOME, else the configuration file's home,
// else the default. ok is false when that is not an absolute path (the
// server's working directory is not the client's) or is not certain.
func storeDir(args []string, getenv func(string) string) (string, bool) {
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
	raw, err := paths.Home(raw, getenv, func() (string, error) {
		p, _ := paths.ConfigFile(getenv)
		if p == "" {
			return "", nil
		}
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			return "", nil
		}
		if err != nil {
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

// Main is the main of a command's small client: it runs command through
// the store's server, or else has target (mira-index) run it in this
// process's place, and returns the exit status when it could do neither.
func Main(command, target string) int {
	if code, ok := Run(command, os.Args[1:]); ok {
		return code
	}
	err := Exec(target, command, os.Args[1:])
	fmt.Fprintf(os.Stderr, "%s: %v\n", command, err)
	return 1
}

// errUncertain is a configuration whose home only the full command can
// read for certain.
var errUncertain = errors.New("home not certain")
