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
	"runtime"
	"slices"
	"strings"
	"syscall"
	"unsafe"

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
	if len(s.Bind)+len(s.ReadOnly) > 0 || s.Probe {
		// The mounts, the capabilities and the exec below are the
		// calling thread's: they all happen on this one.
		runtime.LockOSThread()
		if err := mountGuards(s.Bind, s.ReadOnly); err != nil {
			return err
		}
		if s.Probe {
			os.Exit(0)
		}
		if err := dropCapabilities(); err != nil {
			return err
		}
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
//
// When bind or readOnly name paths, the command runs in a user and mount
// namespace of its own, where the helper mounts them in place (see
// sandboxSpec) before it confines itself: the user's id is mapped to
// itself, and the shell keeps no capability in the namespace.
func confinedCommand(shell, command string, write, env, bind, readOnly []string) (*exec.Cmd, error) {
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
	spec, err := json.Marshal(sandboxSpec{Shell: path, Write: write, Bind: bind, ReadOnly: readOnly})
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:        self,
		Args:        []string{shell, "-c", command},
		Env:         append(slices.Clip(env), sandboxEnv+"="+string(spec)),
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if len(bind)+len(readOnly) > 0 {
		inNamespace(cmd.SysProcAttr)
	}
	return cmd, nil
}

// inNamespace makes a command start in a new user and mount namespace,
// as the user it runs as.
func inNamespace(a *syscall.SysProcAttr) {
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	a.GidMappingsEnableSetgroups = false
}

// kernelNamespaces reports whether a command can run in a user and mount
// namespace of its own and mount files there read-only, by having the
// sandbox helper try it on a directory of its own; else why not.
func kernelNamespaces() error {
	dir, err := os.MkdirTemp("", "mira-ns-probe-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		return err
	}
	self := "/proc/self/exe"
	if _, err := os.Stat(self); err != nil {
		if self, err = os.Executable(); err != nil {
			return err
		}
	}
	spec, err := json.Marshal(sandboxSpec{Probe: true, Bind: []string{dir}, ReadOnly: []string{f}})
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{Path: self, Args: []string{"mira-ns-probe"}, Env: []string{sandboxEnv + "=" + string(spec)}, SysProcAttr: &syscall.SysProcAttr{}}
	inNamespace(cmd.SysProcAttr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			return fmt.Errorf("%v: %s", err, msg)
		}
		return err
	}
	return nil
}

// mountGuards mounts each of bind on itself and each of readOnly on
// itself read-only, in the helper's own mount namespace. The namespace's
// mounts are made private first, so that none of this reaches the
// user's.
func mountGuards(bind, readOnly []string) error {
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the namespace's mounts private: %w", err)
	}
	for _, p := range bind {
		if err := syscall.Mount(p, p, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("mounting %s on itself: %w", p, err)
		}
	}
	for _, p := range readOnly {
		if err := syscall.Mount(p, p, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("mounting %s on itself: %w", p, err)
		}
		// A remount in a user namespace must keep the flags of the
		// mount it came from that the namespace may not lift.
		var st syscall.Statfs_t
		if err := syscall.Statfs(p, &st); err != nil {
			return fmt.Errorf("reading the mount flags of %s: %w", p, err)
		}
		flags := uintptr(syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_RDONLY)
		for _, f := range [][2]uintptr{{0x2, syscall.MS_NOSUID}, {0x4, syscall.MS_NODEV}, {0x8, syscall.MS_NOEXEC}, {0x400, syscall.MS_NOATIME}, {0x800, syscall.MS_NODIRATIME}, {0x1000, syscall.MS_RELATIME}} {
			if uintptr(st.Flags)&f[0] != 0 {
				flags |= f[1]
			}
		}
		if err := syscall.Mount("", p, "", flags, ""); err != nil {
			return fmt.Errorf("making %s read-only: %w", p, err)
		}
	}
	// The working directory was taken before the mounts: entered again
	// by its path, it is the one under them.
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	return os.Chdir(wd)
}

// dropCapabilities leaves the calling thread, and the program it executes,
// no capability: in its own user namespace the helper has them all, and a
// shell that kept them could undo the mounts.
func dropCapabilities() error {
	const (
		prCapbsetDrop       = 24
		prCapAmbient        = 47
		prCapAmbientClear   = 4
		linuxCapabilityV3   = 0x20080522
		capLastCapGuessHigh = 64
	)
	for c := uintptr(0); c < capLastCapGuessHigh; c++ {
		_, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prCapbsetDrop, c, 0)
		if e == syscall.EINVAL {
			break // past the last capability the kernel knows
		}
		if e != 0 {
			return fmt.Errorf("dropping capability %d: %w", c, e)
		}
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClear, 0, 0, 0, 0); e != 0 && e != syscall.EINVAL {
		return fmt.Errorf("clearing the ambient capabilities: %w", e)
	}
	hdr := struct {
		version uint32
		pid     int32
	}{linuxCapabilityV3, 0}
	var data [2]struct{ effective, permitted, inheritable uint32 }
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("dropping the capabilities: %w", e)
	}
	return nil
}
