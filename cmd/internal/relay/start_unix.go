//go:build unix

package relay

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/miramem/mira/internal/paths"
	"github.com/miramem/mira/internal/proc"
)

// Start starts target (mira-index) serving the store at home, in the
// background and for as long as it is used (`mira-index watch
// --on-demand`), and returns a connection to it once it answers. Only
// one server runs per store: the one that holds ServeLock. When another
// process is already starting one, Start waits for that one instead. It
// fails when the server cannot be started or stops before it answers, or
// after StartWait: the caller then runs the command itself.
//
// The server runs in a session of its own, so the client's terminal and
// its signals do not reach it, with its standard input /dev/null and its
// output appended to ServeLog.
func Start(home, target string) (conn, error) {
	// Nothing is written into what is not a store: the command says so.
	if !paths.IsStore(home) {
		return -1, errors.New("no store")
	}
	// A store that other users can read is made private by the command,
	// which tells its user so; the server it starts next time could not.
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm()&0o077 != 0 {
		return -1, errors.New("the store is not private")
	}
	dir := filepath.Join(home, ".index")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return -1, err
	}
	lock := filepath.Join(dir, ServeLock)
	child := 0
	// ready is the end of a pipe the server started here writes a byte
	// to once it listens, and that closes when it stops: the client wakes
	// up then, not at its next look. Looking every 20 ms, it came 7 to
	// 21 ms late, a tenth of a first recall of a thousand entries.
	var ready *os.File
	defer func() {
		if ready != nil {
			ready.Close()
		}
	}()
	if unlock, ok := tryLock(lock); ok {
		unlock() // nobody serves
		if watched(dir) {
			// A watcher that does not serve (--no-serve, a warm Memory
			// in another program) keeps the index fresh: the command
			// trusts it, and a server would find the store watched.
			return -1, errors.New("the store is watched")
		}
		pid, r, err := spawn(home, dir, target)
		if err != nil {
			return -1, err
		}
		child, ready = pid, r
	}
	sock := Socket(home)
	deadline := time.Now().Add(StartWait)
	for pause := 500 * time.Microsecond; ; pause = min(2*pause, 20*time.Millisecond) {
		if c, err := dial(sock); err == nil {
			return c, nil
		}
		if child > 0 {
			var ws syscall.WaitStatus
			if pid, _ := syscall.Wait4(child, &ws, syscall.WNOHANG, nil); pid == child {
				child = 0 // it stopped: it lost a race, or failed (see the log)
			}
		}
		if child == 0 {
			// Whoever starts a server holds the lock until it stops.
			if unlock, ok := tryLock(lock); ok {
				unlock()
				if c, err := dial(sock); err == nil {
					return c, nil
				}
				return -1, errors.New("the server stopped before it answered")
			}
		}
		// A server that builds the index (the first recall after an
		// import) is waited for as long as the build goes on, and
		// StartWait after it, while the server loads what it built: a
		// client that gave up would wait for the same build and then
		// load the whole index in its own process (0.5 to 1 GB beside
		// the server's at a million entries).
		if time.Now().After(deadline) {
			if !building(dir) {
				return -1, errors.New("the server did not answer in time")
			}
			deadline = time.Now().Add(StartWait)
		}
		if ready != nil && waitReady(ready, deadline) {
			ready.Close()
			ready = nil // it listens, or has stopped: look again at once
			continue
		}
		time.Sleep(pause)
	}
}

// waitReady waits on the pipe of a server being started until it writes
// its byte or closes its end (it listens, or stopped), and reports true
// then; false when the deadline came first, or the pipe cannot be waited
// on.
func waitReady(ready *os.File, deadline time.Time) bool {
	if err := ready.SetReadDeadline(deadline); err != nil {
		return false
	}
	var b [1]byte
	_, err := ready.Read(b[:])
	return err == nil || errors.Is(err, io.EOF)
}

// buildAge is how old a generation being built may be before it is taken
// for a crashed build's leftovers, as the index takes it.
const buildAge = time.Hour

// building reports whether a process is building an index generation newer
// than the current one in the index directory dir: its lock is held.
func building(dir string) bool {
	cur := int64(0)
	if b, err := os.ReadFile(filepath.Join(dir, "CURRENT")); err == nil {
		cur = genTime(string(bytes.TrimSpace(b)))
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		t := genTime(e.Name())
		if !e.IsDir() || t <= cur || time.Since(time.Unix(0, t)) > buildAge {
			continue
		}
		if held(filepath.Join(dir, e.Name(), "lock")) {
			return true
		}
	}
	return false
}

// genTime is the time in a generation's name (g-<unix ns>), 0 for another
// name.
func genTime(name string) int64 {
	rest, ok := strings.CutPrefix(name, "g-")
	if !ok {
		return 0
	}
	t, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || t <= 0 {
		return 0
	}
	return t
}

// held reports whether another process holds a lock on the existing file
// at path (which it does not create).
func held(path string) bool {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	unlock, ok := lockFD(fd)
	if ok {
		unlock()
	}
	return !ok
}

// spawn starts `target watch --on-demand` for the store at home, detached,
// and returns its pid and the read end of its readiness pipe (ReadyFD).
func spawn(home, dir, target string) (int, *os.File, error) {
	path, err := find(target)
	if err != nil {
		return 0, nil, err
	}
	logPath := filepath.Join(dir, ServeLog)
	flag := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if fi, err := os.Stat(logPath); err == nil && fi.Size() > maxLog {
		flag |= os.O_TRUNC // a log that has grown is started anew
	}
	log, err := os.OpenFile(logPath, flag, 0o600)
	if err != nil {
		return 0, nil, err
	}
	defer log.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, nil, err
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return 0, nil, err
	}
	// The server's end is closed here once it has its own: the pipe
	// ends when the server closes it or stops.
	defer w.Close()
	p, err := os.StartProcess(path, []string{target, "watch", "--on-demand", "--home", home, "--ready-fd", strconv.Itoa(ReadyFD)}, &os.ProcAttr{
		Dir:   "/", // keep no client's directory busy
		Env:   os.Environ(),
		Files: []*os.File{null, log, log, w},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		r.Close()
		return 0, nil, err
	}
	return p.Pid, r, nil
}

// ReadyPipe returns the server's end of the readiness pipe on descriptor
// fd (see ReadyFD), kept from the processes it starts. Ready on it says
// the server listens; closing it without says it will not.
func ReadyPipe(fd int) *os.File {
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "ready")
}

// Ready tells the client waiting on the readiness pipe that the server
// listens, and closes the pipe.
func Ready(f *os.File) {
	f.Write([]byte{1}) // a client that has gone is no matter
	f.Close()
}

// leaseName is the watcher's lease in the index directory, renewed every
// two seconds (see index.Watch); leaseFresh is the age below which it is
// taken for a live watcher's.
const (
	leaseName  = "watch"
	leaseFresh = 10 * time.Second
)

// watched reports whether a live watcher holds the lease of the index
// in dir: renewed lately, by a process that still runs when it is of
// this host. The lease is JSON; the client reads its two fields by hand.
func watched(dir string) bool {
	path := filepath.Join(dir, leaseName)
	fi, err := os.Stat(path)
	if err != nil || time.Since(fi.ModTime()) > leaseFresh {
		return false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	host, _ := os.Hostname()
	if !bytes.Contains(b, []byte(`"host":`+string(appendString(nil, host)))) {
		return true // another host's: it cannot be checked from here
	}
	_, rest, ok := bytes.Cut(b, []byte(`"pid":`))
	pid := 0
	for ; ok && len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9'; rest = rest[1:] {
		pid = pid*10 + int(rest[0]-'0')
	}
	return proc.Alive(pid)
}

// maxLog is the size above which the server's log is emptied when the
// next server starts.
const maxLog = 1 << 20

// tryLock takes an exclusive lock on the file at path (created if need
// be) without waiting.
func tryLock(path string) (unlock func(), ok bool) {
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, false
	}
	return lockFD(fd)
}

// lockFD takes an exclusive lock on the open file fd without waiting; it
// closes fd when it cannot.
func lockFD(fd int) (unlock func(), ok bool) {
	var err error
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		syscall.Close(fd)
		return nil, false
	}
	return func() { syscall.Close(fd) }, true
}

// LockServe takes the store's ServeLock for a server, without waiting,
// and holds it until unlock (or the process's end). It fails with
// ErrServed while another process holds it.
func LockServe(home string) (unlock func(), err error) {
	dir := filepath.Join(home, ".index")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ServeLock)
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if unlock, ok := lockFD(fd); ok {
		return unlock, nil
	}
	return nil, ErrServed
}
