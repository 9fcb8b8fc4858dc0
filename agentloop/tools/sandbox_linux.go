//go:build linux

package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// init makes every binary that links this package able to act as the
// sandbox helper, before any of its own code runs. The helper never
// returns: it becomes the shell, or it exits saying why the command did
// not run.
func init() {
	if spec, ok := os.LookupEnv(sandboxEnv); ok {
		err := sandboxExec(spec)
		fmt.Fprintf(os.Stderr, "mira: the command did not run because it could not be confined: %v\n", err)
		os.Exit(126)
	}
}

// kernelLandlockABI asks the kernel for its Landlock ABI version.
func kernelLandlockABI() (int, error) {
	v, err := ll.LandlockGetABIVersion()
	switch {
	case errors.Is(err, syscall.ENOSYS):
		return 0, errors.New("the kernel has no Landlock system calls (it is older than Linux 5.13 or built without CONFIG_SECURITY_LANDLOCK)")
	case errors.Is(err, syscall.EOPNOTSUPP):
		return 0, errors.New("Landlock is built into the kernel but was not enabled at boot (see the lsm= kernel parameter)")
	case errors.Is(err, syscall.EPERM):
		return 0, errors.New("the Landlock system calls are blocked, probably by a container's seccomp filter")
	case err != nil:
		return 0, fmt.Errorf("asking for the Landlock ABI version: %w", err)
	case v < 1:
		return 0, fmt.Errorf("the kernel reports Landlock ABI version %d", v)
	}
	return v, nil
}

// sandboxConfig is the Landlock configuration of a confined command: every
// right to change the file system that the newest ABI go-landlock knows
// can restrict. Reading files, listing directories and executing programs
// are not handled, so they stay allowed everywhere without a rule; nor is
// connecting to UNIX sockets by path (ABI 9), which is talking to another
// program (ssh-agent, a database, systemd-resolved) rather than writing.
// RestrictPaths leaves the network and signals alone, and BestEffort drops
// whatever the running kernel does not know.
var sandboxConfig = func() landlock.Config {
	c := landlock.V11
	c.HandledAccessFS &^= ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir | ll.AccessFSResolveUnix
	return c
}()

// sandboxExec is the sandbox helper: it restricts the process as spec says
// and executes the shell with the helper's own arguments. It returns only
// on failure.
func sandboxExec(spec string) error {
	os.Unsetenv(sandboxEnv) // not for the programs the command runs
	var s sandboxSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		return fmt.Errorf("%s holds no sandbox specification: %w", sandboxEnv, err)
	}
	if !filepath.IsAbs(s.Shell) || len(os.Args) == 0 {
		return fmt.Errorf("%s names no shell to run", sandboxEnv)
	}
	if err := confine(s.Write); err != nil {
		return err
	}
	return syscall.Exec(s.Shell, os.Args, os.Environ())
}

// confine restricts the process and everything it starts to changing files
// under write and sandboxDevices. It refuses to run unconfined: the caller
// checked that the kernel has Landlock.
func confine(write []string) error {
	abi, err := kernelLandlockABI()
	if err != nil {
		return err
	}
	var rules []landlock.Rule
	for _, p := range write {
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// An allowed path that does not exist: its parent is
			// not writable, so nothing can appear there.
			continue
		case err != nil:
			return err
		case fi.IsDir():
			r := landlock.RWDirs(p)
			if abi >= 2 {
				// Moving files between directories of the
				// project; asked for on ABI 1, it would turn
				// the best effort into no restriction at all.
				r = r.WithRefer()
			}
			rules = append(rules, r)
		default:
			rules = append(rules, landlock.RWFiles(p))
		}
	}
	rules = append(rules, landlock.RWFiles(sandboxDevices...).WithIoctlDev().IgnoreIfMissing())
	if err := sandboxConfig.BestEffort().RestrictPaths(rules...); err != nil {
		return fmt.Errorf("applying Landlock (ABI %d): %w", abi, err)
	}
	return nil
}

// confinedCommand returns the command that runs `shell -c command`
// confined to changing files under write (and sandboxDevices), through the
// sandbox helper: the running binary executed again with sandboxEnv set.
// env is the command's environment.
//
// The command starts a session of its own, so it has no controlling
// terminal: it cannot reach the user's terminal through /dev/tty, nor push
// input into it with the TIOCSTI ioctl, which the devices' ioctl right
// would otherwise allow. Its session is also its process group, which
// terminateGroup and killGroup stop.
func confinedCommand(shell, command string, write, env []string) (*exec.Cmd, error) {
	path, err := exec.LookPath(shell)
	if err != nil {
		return nil, err
	}
	if path, err = filepath.Abs(path); err != nil {
		return nil, err
	}
	// /proc/self/exe stays valid when the binary is replaced on disk
	// during the session (go install, a package upgrade).
	self := "/proc/self/exe"
	if _, err := os.Stat(self); err != nil {
		if self, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("finding the running binary: %w", err)
		}
	}
	spec, err := json.Marshal(sandboxSpec{Shell: path, Write: write})
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:        self,
		Args:        []string{shell, "-c", command},
		Env:         append(slices.Clip(env), sandboxEnv+"="+string(spec)),
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	return cmd, nil
}
