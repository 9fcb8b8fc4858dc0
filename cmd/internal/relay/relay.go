// Package relay lets mira-recall run in a process that is already warm.
//
// A recall on its own pays for starting a large program, opening the
// index, reading the embedding model and mapping the vectors before it
// looks anything up; at 10k entries that is nearly all of its time. While
// `mira-index watch` runs it keeps the index fresh anyway, so it also
// listens on a Unix socket in the index directory and runs recalls for
// small clients: mira-recall's main is such a client, built without the
// rest of Mira, and runs the full command itself (by executing mira-index,
// see Exec) only when nothing answers.
//
// The protocol is private to one installation of Mira. The client sends
// one JSON line, a Request; the server answers with frames, each a kind
// byte, a big-endian uint32 length and that many bytes: 'o' for stdout,
// 'e' for stderr, and last 'x' with the exit status in decimal. The
// server runs the same code as the full command, with the client's
// arguments, environment, working directory and terminals, so the output
// is the same byte for byte.
package relay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"
)

// SocketName is the server's socket in the index directory.
const SocketName = "recall.sock"

// ServeLock is the file in the index directory that the server of a
// store holds locked (flock) while it runs, from before its first batch:
// a second server started at the same moment finds it taken and leaves.
const ServeLock = "serve.lock"

// ErrServed says another process holds the store's ServeLock.
var ErrServed = errors.New("another server has the store")

// ServeLog is the file in the index directory where a server started on
// demand writes its warnings.
const ServeLog = "serve.log"

// StartWait bounds how long a client waits for a server it started (or
// found starting) to answer, before it runs the command itself. A server
// that builds the index first can take seconds.
const StartWait = 30 * time.Second

// ReadyFD is the descriptor on which a server started on demand (see
// Start) finds its readiness pipe: it writes a byte there once it
// listens (see Ready), and the pipe ends when it stops.
const ReadyFD = 3

// MaxSocketPath is the longest socket path a client dials or a server
// listens on (sun_path holds 108 bytes on Linux, 104 on the BSDs).
const MaxSocketPath = 100

// AsFlag, as the first argument of mira-index, makes it run the command
// named after the = instead (see Exec).
const AsFlag = "--as="

// Socket returns the socket path for the store at home (absolute).
func Socket(home string) string { return filepath.Join(home, ".index", SocketName) }

// Request is what a client asks the server to run.
type Request struct {
	Command string   `json:"command"` // mira-recall or mira-remember
	Args    []string `json:"args"`
	Dir     string   `json:"dir"` // the client's working directory
	Env     []string `json:"env"` // the client's environment, KEY=value
	OutTTY  bool     `json:"out_tty"`
	ErrTTY  bool     `json:"err_tty"`
}

// Frame kinds.
const (
	Stdout = 'o'
	Stderr = 'e'
	Exit   = 'x'
)

// maxFrame bounds a frame's length, so a confused peer cannot make the
// other allocate without end.
const maxFrame = 64 << 20

// WriteFrame writes one frame.
func WriteFrame(w io.Writer, kind byte, p []byte) error {
	var h [5]byte
	h[0] = kind
	binary.BigEndian.PutUint32(h[1:], uint32(len(p)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(p)
	return err
}

// ReadFrame reads one frame; io.EOF means the stream ended between frames.
func ReadFrame(r io.Reader) (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > maxFrame {
		return 0, nil, fmt.Errorf("frame of %d bytes", n)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, err
	}
	return h[0], p, nil
}
