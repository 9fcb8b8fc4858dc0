package relay

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// find looks for the program target beside this one (as invoked, then as
// resolved) and then on $PATH: Mira's commands are installed together.
func find(target string) (string, error) {
	var dirs []string
	if a := os.Args[0]; strings.ContainsRune(a, filepath.Separator) {
		dirs = append(dirs, filepath.Dir(a))
	}
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	for _, d := range dirs {
		p := filepath.Join(d, target)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			// Absolute: a server is started in another directory, where
			// a path as the user typed it (bin/mira-recall) means nothing.
			return filepath.Abs(p)
		}
	}
	p, err := exec.LookPath(target)
	if err != nil {
		return "", fmt.Errorf("cannot find %s, which runs this command when no index watcher serves it: install it beside this program or on $PATH", target)
	}
	return p, nil
}
