package cli

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
	"strings"
	"sync"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/cmd/internal/relay"
	"github.com/miramem/mira/index"
)

// recallServer runs mira-recall for relay clients inside the watcher (see
// package relay): in a process that has the index fresh, the embedding
// model read and the vectors mapped, a recall is its search alone.
type recallServer struct {
	o       *IO // the watcher's, for its own warnings
	verbose bool
	sync    *index.Syncer
	keep    *index.Keep // shared with the watcher's batches
	parsers parsers
	records mira.RecordCache
	ln      net.Listener
	mu      sync.Mutex // one recall at a time: they take milliseconds
	wg      sync.WaitGroup
}

// listenRecall starts serving on the store's socket. The caller holds the
// watcher's lease, so a socket file already there is a dead watcher's.
func listenRecall(o *IO, root string, sync *index.Syncer, keep *index.Keep, verbose bool) (*recallServer, error) {
	sock := relay.Socket(root)
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
	s := &recallServer{o: o, verbose: verbose, sync: sync, keep: keep, ln: ln}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *recallServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// Out of file descriptors, say: clients run their recalls
			// themselves meanwhile, and serving goes on.
			s.o.Warnf("warning: recall socket: %v", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.serve(c)
		}()
	}
}

// close stops serving, waits for the recalls under way, and removes the
// socket.
func (s *recallServer) close() {
	s.ln.Close() // removes the socket file too
	s.wg.Wait()
}

func (s *recallServer) serve(c net.Conn) {
	// What changed up to now is to be in the index before the search:
	// the client connected after every change it may look for. Taking it
	// in runs while the request is read and parsed.
	start := time.Now()
	synced := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		synced <- s.sync.Sync(ctx)
	}()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReaderSize(c, 64<<10).ReadBytes('\n')
	if err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	var req relay.Request
	if err := json.Unmarshal(line, &req); err != nil || req.Command != "mira-recall" || req.Dir == "" {
		// Closing without a frame makes the client run the command itself.
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	stuck := false
	ready := func() error {
		serr := <-synced
		if errors.Is(serr, context.DeadlineExceeded) {
			stuck = true // the watcher is stuck or gone: the client runs the recall
			return serr
		}
		return nil // a batch that failed is reported by the watcher
	}
	env := make(map[string]string, len(req.Env))
	for _, kv := range req.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	var out, errb bytes.Buffer
	o := &IO{
		In: strings.NewReader(""), Out: &out, Err: &errb,
		OutTTY: req.OutTTY || env["MIRA_FORCE_TTY"] == "1", ErrTTY: req.ErrTTY,
		Getenv: func(k string) string { return env[k] },
		Getwd:  func() (string, error) { return req.Dir, nil },
		keep:   s.keep, parsers: &s.parsers, records: &s.records, ready: ready,
	}
	code, ok := s.recall(req.Args, o)
	if !ok || stuck {
		return // no frame: the client runs the recall itself
	}
	w := bufio.NewWriterSize(c, 64<<10)
	// stderr first: warnings belong before the results, as a terminal shows them.
	if errb.Len() > 0 {
		relay.WriteFrame(w, relay.Stderr, errb.Bytes())
	}
	if out.Len() > 0 {
		relay.WriteFrame(w, relay.Stdout, out.Bytes())
	}
	relay.WriteFrame(w, relay.Exit, []byte(strconv.Itoa(code)))
	w.Flush() // a client that went away is no error of ours
	if s.verbose {
		s.o.Warnf("%s answered mira-recall (exit %d, %s)", start.Local().Format(time.TimeOnly), code, time.Since(start).Round(10*time.Microsecond))
	}
}

// recall runs one recall; a panic in it is reported and costs that recall
// only, not the watcher.
func (s *recallServer) recall(args []string, o *IO) (code int, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			s.o.Warnf("warning: a served recall failed: %v", r)
			ok = false
		}
	}()
	return Recall(args, o), true
}
