// Package server is the other end of package relay: it answers the small
// clients on a store's socket from a warm process (mira-index watch). It
// lives apart from relay so that the clients, which link relay, do not
// link the net package.
package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miramem/mira/cmd/internal/relay"
)

// Runner runs one request for the server: the command with the client's
// arguments, environment and working directory, its output written to
// stdout and stderr. ready waits until the store's latest changes are in
// the index and fails when they cannot be had in time. ok false means the
// command was not run (it failed in a way the client should see by running
// the command itself): no frame is sent, and the client does that.
type Runner func(req relay.Request, ready func() error, stdout, stderr *bytes.Buffer) (code int, ok bool)

// served are the commands a server runs for clients.
var served = map[string]bool{"mira-recall": true, "mira-remember": true}

// storeWriters are the served commands that change the store. The server runs
// them only for clients that could have run them themselves: not for a
// process confined by mira-agent's sandbox, which must not reach past its
// confinement through the server's unconfined process. Such a client gets
// no frame, runs the command itself, and the kernel refuses its writes
// outside the paths the sandbox allows.
var storeWriters = map[string]bool{"mira-remember": true}

// Server answers clients on a store's socket (see package relay).
type Server struct {
	sync func(context.Context) error
	run  Runner
	logf func(format string, args ...any)
	ln   net.Listener
	mu   sync.Mutex // one command at a time: they take milliseconds
	wg   sync.WaitGroup
	// last is when the server last finished answering (unix ns); busy
	// counts the requests under way.
	last atomic.Int64
	busy atomic.Int32
}

// Idle is how long the server has had no request: zero while one is
// under way.
func (s *Server) Idle() time.Duration {
	if s.busy.Load() > 0 {
		return 0
	}
	return time.Duration(time.Now().UnixNano() - s.last.Load())
}

// Listen starts serving on the socket of the store at home. The caller
// holds the watcher's lease, so a socket file already there is a dead
// watcher's. sync takes in what changed so far; it runs while each request
// is read. logf receives the server's own warnings.
func Listen(home string, sync func(context.Context) error, run Runner, logf func(format string, args ...any)) (*Server, error) {
	sock := relay.Socket(home)
	if len(sock) > relay.MaxSocketPath {
		return nil, fmt.Errorf("the socket path %s is longer than %d bytes", sock, relay.MaxSocketPath)
	}
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return nil, err
	}
	// Only the store's owner may ask: recalls read the whole memory.
	if err := os.Chmod(sock, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	s := &Server{sync: sync, run: run, logf: logf, ln: ln}
	s.last.Store(time.Now().UnixNano())
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Out of file descriptors, say: clients run their commands
			// themselves meanwhile, and serving goes on.
			s.logf("warning: recall socket: %v", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		s.wg.Add(1)
		s.busy.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			defer func() {
				s.last.Store(time.Now().UnixNano())
				s.busy.Add(-1)
			}()
			s.serve(c)
		}()
	}
}

// Close stops serving, waits for the commands under way, and removes the
// socket.
func (s *Server) Close() {
	s.ln.Close() // removes the socket file too
	s.wg.Wait()
}

// readers and writers are the connections' buffers, kept from one
// request to the next instead of allocated (and zeroed) for each.
var (
	readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}
	writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 64<<10) }}
)

func (s *Server) serve(c net.Conn) {
	// What changed up to now is to be in the index before the search:
	// the client connected after every change it may look for. Taking it
	// in runs while the request is read and parsed.
	synced := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		synced <- s.sync(ctx)
	}()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := readers.Get().(*bufio.Reader)
	br.Reset(c)
	line, err := br.ReadBytes('\n')
	br.Reset(nil)
	readers.Put(br)
	if err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	var req relay.Request
	if err := json.Unmarshal(line, &req); err != nil || !served[req.Command] || req.Dir == "" {
		// Closing without a frame makes the client run the command itself.
		return
	}
	if storeWriters[req.Command] {
		if confined, err := peerConfined(c); confined {
			if err != nil {
				s.logf("warning: recall socket: %s not served: cannot tell whether the client is confined: %v", req.Command, err)
			}
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A command may ask more than once (a recall searching again for
	// more, a read retried): the sync's result is taken once and kept.
	stuck := false
	var (
		synchronised bool
		serr         error
	)
	ready := func() error {
		if !synchronised {
			serr, synchronised = <-synced, true
		}
		if errors.Is(serr, context.DeadlineExceeded) {
			stuck = true // the watcher is stuck or gone: the client runs the command
			return serr
		}
		return nil // a batch that failed is reported by the watcher
	}
	var out, errb bytes.Buffer
	code, ok := s.run(req, ready, &out, &errb)
	if !ok || stuck {
		return // no frame: the client runs the command itself
	}
	w := writers.Get().(*bufio.Writer)
	w.Reset(c)
	defer func() { w.Reset(nil); writers.Put(w) }()
	// stderr first: warnings belong before the results, as a terminal shows them.
	if errb.Len() > 0 {
		relay.WriteFrame(w, relay.Stderr, errb.Bytes())
	}
	if out.Len() > 0 {
		relay.WriteFrame(w, relay.Stdout, out.Bytes())
	}
	relay.WriteFrame(w, relay.Exit, []byte(strconv.Itoa(code)))
	w.Flush() // a client that went away is no error of ours
}
