package httpguard

import (
	"io"
	"net/http"
	"time"
)

// timeBody bounds the time the body of a request may take to arrive:
// BodyTimeout, plus a second for every BodyRate bytes received. A client
// that trickles its body is cut off when the connection's read deadline
// passes. Once the body has arrived the deadline is lifted: the answer
// (a stream can last minutes) is not bounded by it.
func (g *Guard) timeBody(w http.ResponseWriter, body io.ReadCloser) io.ReadCloser {
	rc := http.NewResponseController(w)
	b := &timedBody{ReadCloser: body, rc: rc, start: time.Now(), base: g.opt.BodyTimeout, rate: g.opt.BodyRate}
	b.rc.SetReadDeadline(b.start.Add(b.base))
	return b
}

type timedBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	start time.Time
	base  time.Duration
	rate  int64
	n     int64
	done  bool
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.done {
		return n, err
	}
	b.n += int64(n)
	if err == io.EOF {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
		return n, err
	}
	if err != nil {
		// The deadline passed (or the client went): the deadline stays,
		// so that what is left of the body is not waited for either.
		b.done = true
		return n, err
	}
	if n > 0 {
		b.rc.SetReadDeadline(b.start.Add(b.base + time.Duration(b.n*int64(time.Second)/b.rate)))
	}
	return n, err
}
