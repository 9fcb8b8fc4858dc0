package proxy

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/cmd/internal/httpguard"
	plan "github.com/miramem/mira/ctx"
	"github.com/miramem/mira/mem"
)

// Headers the proxy reads from clients and sends back. Every X-Mira-*
// header of a request is the proxy's and is not passed on.
const (
	// HeaderConversation names the conversation (its scope in the store).
	HeaderConversation = "X-Mira-Conversation"
	// HeaderMira set to "off" makes the request a plain pass-through: no
	// recall, nothing stored.
	HeaderMira = "X-Mira"
	// HeaderRemember set to "off" keeps the recall and stores nothing.
	HeaderRemember = "X-Mira-Remember"
	// HeaderPlan, on a reply, is the id of the context plan injected
	// (with --log, the plan is in $MIRA_HOME/plans/<id>.json).
	HeaderPlan = "X-Mira-Plan"
	// HeaderWarning, on a reply, says what the proxy did not do and why
	// (a turn not stored because it looks like a secret, a failed recall).
	HeaderWarning = "X-Mira-Warning"
)

// Options configure a Server.
type Options struct {
	// Memory is the store; the Server does not close it.
	Memory *mira.Memory
	// Upstream is the API root of the OpenAI-compatible server, usually
	// ending in /v1: a request for /v1/X goes to Upstream + /X.
	Upstream string
	// APIKey, when set, is the bearer token sent upstream instead of the
	// client's Authorization header.
	APIKey string
	// Token, when set, is the bearer token every client must send.
	Token string
	// ListenHost is the host of the address the proxy listens on, and
	// AllowHosts more Host values it accepts; AllowOrigins are the
	// browser origins allowed to call it (see package httpguard).
	ListenHost   string
	AllowHosts   []string
	AllowOrigins []string
	// BodyTimeout bounds the time a request's body may take to arrive
	// (default httpguard.DefaultBodyTimeout).
	BodyTimeout time.Duration
	// Conversation is the conversation of requests that name none.
	Conversation string
	// Mode, Budget and Encoding plan the context block as mira-context
	// does; RecallK memories are recalled for each user message.
	Mode     string
	Budget   int
	Encoding string
	RecallK  int
	// Log keeps each plan in $MIRA_HOME/plans.
	Log bool
	// MaxBody bounds a request's body (default 8 MiB).
	MaxBody int64
	// Timeout bounds one upstream call (default 10 minutes).
	Timeout time.Duration
	// Client sends the upstream requests (default: one of its own).
	Client *http.Client
	// Writer stores the turns; After runs the work after a turn.
	Writer *mira.TurnWriter
	After  *Curator
	// Log receives one line per request and the problems that fail no
	// request; nil discards them.
	Logf func(format string, args ...any)
}

// Server is the proxy: an http.Handler.
type Server struct {
	opt      Options
	upstream *url.URL
	guarded  http.Handler

	mu    sync.Mutex
	convs map[string]*convState

	// testHookStore, when set, runs before an answer is stored (a test
	// slows the store down with it).
	testHookStore func()
}

// convState is what the proxy keeps of a conversation between requests:
// the block injected for its latest user message, sent again unchanged
// while the client's tool loop answers that message, so that the prompt's
// prefix stays the same and the provider's cache keeps hitting.
type convState struct {
	userHash [32]byte
	block    []byte
	planID   string
}

// maxConvs bounds the conversations whose last block is kept.
const maxConvs = 10000

// New returns a Server.
func New(opt Options) (*Server, error) {
	u, err := url.Parse(strings.TrimRight(opt.Upstream, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--upstream: %q is not an http(s) URL", opt.Upstream)
	}
	opt.MaxBody = cmp.Or(opt.MaxBody, 8<<20)
	opt.Timeout = cmp.Or(opt.Timeout, 10*time.Minute)
	opt.Conversation = cmp.Or(opt.Conversation, "proxy")
	if opt.Client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		opt.Client = &http.Client{Transport: t}
	}
	if opt.Logf == nil {
		opt.Logf = func(string, ...any) {}
	}
	s := &Server{opt: opt, upstream: u, convs: map[string]*convState{}}
	g, err := httpguard.New(httpguard.Options{Token: opt.Token, Realm: "mira-proxy", ListenHost: opt.ListenHost,
		AllowHosts: opt.AllowHosts, AllowOrigins: opt.AllowOrigins, BodyTimeout: opt.BodyTimeout,
		ExposeHeaders: exposed, Error: writeError})
	if err != nil {
		return nil, fmt.Errorf("--allow-host: %w", err)
	}
	s.guarded = g.Wrap(http.HandlerFunc(s.route))
	return s, nil
}

// exposed are the reply headers a browser client on an allowed origin may
// read.
var exposed = []string{HeaderConversation, HeaderPlan, HeaderWarning, "Server-Timing", "X-Request-Id", "Openai-Processing-Ms",
	"X-Ratelimit-Limit-Requests", "X-Ratelimit-Limit-Tokens", "X-Ratelimit-Remaining-Requests", "X-Ratelimit-Remaining-Tokens",
	"X-Ratelimit-Reset-Requests", "X-Ratelimit-Reset-Tokens", "Retry-After"}

// ServeHTTP implements http.Handler: the checks of package httpguard
// (Host, Origin, token, the body's pace), then the route.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.guarded.ServeHTTP(w, r)
}

// route passes on what an OpenAI client sends, and nothing else: the
// API's routes with the methods it takes on them, JSON bodies (and
// multipart ones where the API takes uploads).
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	rt := findRoute(r.URL.Path)
	if rt == nil {
		writeError(w, http.StatusNotFound, fmt.Sprintf("%s is no route of the OpenAI API that mira-proxy passes on", r.URL.Path))
		return
	}
	if !rt.allows(r.Method) {
		w.Header().Set("Allow", strings.Join(rt.methods, ", "))
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s is not a call of the OpenAI API", r.Method, r.URL.Path))
		return
	}
	if httpguard.HasBody(r) {
		mt := httpguard.MediaType(r)
		if mt != "application/json" && !(rt.multipart && mt == "multipart/form-data") {
			want := "application/json"
			if rt.multipart {
				want += " or multipart/form-data"
			}
			writeError(w, http.StatusUnsupportedMediaType, fmt.Sprintf("the body of %s %s must be %s, not %q", r.Method, r.URL.Path, want, r.Header.Get("Content-Type")))
			return
		}
	}
	if r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions" && !strings.EqualFold(r.Header.Get(HeaderMira), "off") {
		s.chat(w, r)
		return
	}
	s.pass(w, r)
}

// writeError answers in the OpenAI error shape, which clients parse.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":"mira_proxy_error","code":null}}`+"\n", "mira-proxy: "+msg)
}

// hopHeaders are the hop-by-hop headers a proxy must not pass on.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// upstreamRequest builds the request to the server for r with body.
func (s *Server) upstreamRequest(ctx context.Context, r *http.Request, body io.Reader, size int64) (*http.Request, error) {
	u := *s.upstream
	u.Path = s.upstream.Path + strings.TrimPrefix(r.URL.Path, "/v1")
	u.RawPath = ""
	u.RawQuery = r.URL.RawQuery
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	for k := range req.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-mira") {
			req.Header.Del(k)
		}
	}
	switch {
	case s.opt.APIKey != "":
		req.Header.Set("Authorization", "Bearer "+s.opt.APIKey)
	case s.opt.Token != "":
		req.Header.Del("Authorization") // the proxy's own token stays here
	}
	req.ContentLength = size
	req.Host = ""
	return req, nil
}

// copyHeader copies a reply's end-to-end headers. The upstream's CORS
// headers are not the proxy's: which origins may read its replies is
// for --allow-origin to say.
func copyHeader(dst, src http.Header) {
	for k, vs := range src {
		switch {
		case strings.HasPrefix(k, "Access-Control-"):
		case k == "Vary":
			dst[k] = append(dst[k], vs...)
		default:
			dst[k] = append([]string(nil), vs...)
		}
	}
	for _, h := range hopHeaders {
		dst.Del(h)
	}
}

// pass forwards a request as it is and its reply as it comes: every route
// but chat completions, and chat completions with X-Mira: off.
func (s *Server) pass(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body := http.MaxBytesReader(w, r.Body, s.opt.MaxBody)
	ctx, cancel := context.WithTimeout(r.Context(), s.opt.Timeout)
	defer cancel()
	req, err := s.upstreamRequest(ctx, r, body, r.ContentLength)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if r.ContentLength == 0 {
		req.Body = nil
	}
	resp, err := s.opt.Client.Do(req)
	if err != nil {
		s.upstreamFailed(w, r, err)
		return
	}
	defer resp.Body.Close()
	copyHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	copyFlushing(w, resp.Body, nil)
	s.opt.Logf("%s %s → %d (passed through, %s)", r.Method, r.URL.Path, resp.StatusCode, time.Since(start).Round(time.Millisecond))
}

// upstreamFailed answers a request the server could not be asked.
func (s *Server) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request is larger than %d bytes (--max-body)", mbe.Limit))
	case r.Context().Err() != nil:
		// The client went away; nobody reads the answer.
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusGatewayTimeout, "the upstream server did not answer in time (--timeout)")
	default:
		writeError(w, http.StatusBadGateway, "cannot reach the upstream server: "+err.Error())
	}
	s.opt.Logf("%s %s: upstream: %v", r.Method, r.URL.Path, err)
}

// copyFlushing copies a reply to the client as it arrives, flushing after
// each piece so that a stream's events are not held back, and feeds each
// piece to tee. It returns the error that stopped it, nil at the end.
func copyFlushing(w http.ResponseWriter, body io.Reader, tee io.Writer) error {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if tee != nil {
				tee.Write(buf[:n])
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return clientError{werr}
			}
			rc.Flush()
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// clientError is a failure to pass a reply on to the client (it went
// away), not a failure of the server's.
type clientError struct{ err error }

func (e clientError) Error() string { return e.err.Error() }

// conversation is the conversation of a request: the header, else the
// request's user field, else the default. A user field that is no valid
// scope name is made one.
func (s *Server) conversation(r *http.Request, user string) (string, error) {
	if c := strings.TrimSpace(r.Header.Get(HeaderConversation)); c != "" {
		if err := mem.ValidScope(c); err != nil {
			return "", fmt.Errorf("%s: %v", HeaderConversation, err)
		}
		return c, nil
	}
	if u := mem.ScopeName(user); u != "" {
		return u, nil
	}
	return s.opt.Conversation, nil
}

// exchange is one chat completion going through the proxy.
type exchange struct {
	ctx      context.Context // the request's
	conv     string
	store    bool // the turns of this exchange are stored
	stored   bool // the user turn (or the tool results) were stored
	warnings []string
	planID   string
	// the proxy's own time, by step (see serverTiming)
	tRecall, tPlan, tStore time.Duration
}

// serverTiming is the Server-Timing header of a reply: what the proxy
// added before the request went upstream, step by step, in milliseconds
// (recall, planning the block, storing the turn), so that a user can see
// where the time goes without a profiler.
func (x *exchange) serverTiming(added time.Duration) string {
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64) }
	return "mira-recall;dur=" + ms(x.tRecall) + ", mira-plan;dur=" + ms(x.tPlan) +
		", mira-store;dur=" + ms(x.tStore) + ", mira-added;dur=" + ms(added)
}

// chat serves POST /v1/chat/completions: recall and inject, forward,
// answer, and store the turns.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opt.MaxBody))
	if err != nil {
		s.upstreamFailed(w, r, err)
		return
	}
	req, perr := parseChat(body)
	if perr != nil {
		// Not a request the proxy understands: the server judges it.
		s.opt.Logf("POST %s: passed on as it is: %v", r.URL.Path, perr)
		s.forward(w, r, body, nil, &exchange{}, start)
		return
	}
	x := &exchange{ctx: r.Context(), store: !strings.EqualFold(r.Header.Get(HeaderRemember), "off")}
	if x.conv, err = s.conversation(r, req.user); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	out := body
	if i := req.lastUser(); i >= 0 {
		out = s.inject(r.Context(), req, i, x)
	}
	if x.store {
		start := time.Now()
		s.storeRequestTurns(req, x)
		x.tStore = time.Since(start)
	}
	s.forward(w, r, out, req, x, start)
}

// inject recalls and plans the context block for the last user message
// (message i) and inserts it as a system message just before it. The
// messages before it are the client's, byte for byte, so a provider's
// prompt cache keeps hitting on the conversation so far; while the
// client's tool loop answers the same message, the same block is sent
// again.
func (s *Server) inject(ctx context.Context, req *chatRequest, i int, x *exchange) []byte {
	text := req.msgs[i].Text
	if strings.TrimSpace(text) == "" {
		return req.body
	}
	h := sha256.Sum256([]byte(text))
	continuing := i < len(req.msgs)-1 // tool results or an assistant message follow it
	if continuing {
		s.mu.Lock()
		st := s.convs[x.conv]
		s.mu.Unlock()
		if st != nil && st.userHash == h {
			x.planID = st.planID
			if st.block == nil {
				return req.body
			}
			return req.insertBefore(i, st.block)
		}
	}
	p, err := s.plan(ctx, x, text, req.texts())
	if err != nil {
		if ctx.Err() == nil {
			x.warnings = append(x.warnings, "no memory added: "+err.Error())
			s.opt.Logf("conversation %s: no memory added: %v", x.conv, err)
		}
		return req.body
	}
	st := &convState{userHash: h}
	if len(p.Included) > 0 {
		st.block, st.planID = systemMessage(p.Prompt()), p.ID
		x.planID = p.ID
	}
	s.mu.Lock()
	if len(s.convs) >= maxConvs {
		clear(s.convs)
	}
	s.convs[x.conv] = st
	s.mu.Unlock()
	if st.block == nil {
		return req.body
	}
	return req.insertBefore(i, st.block)
}

// recallKinds are what a user message recalls: memories, summaries and
// the conversation's earlier turns (those the client sent again are left
// out: it has them).
var recallKinds = []string{mem.KindFact, mem.KindPreference, mem.KindDecision, mem.KindCorrection, mem.KindGoal, mem.KindTask, mem.KindNote, mem.KindSummary, mem.KindTurn}

// plan recalls from the conversation's scope and global and plans the
// block: the rolling summary, pins and standing material, then the
// recalled memories and earlier turns, under the budget. sent are the
// texts of the request's messages (normalized by sameText): a turn the
// client sent is not recalled.
func (s *Server) plan(ctx context.Context, x *exchange, text string, sent map[string]bool) (*plan.Plan, error) {
	m, conv := s.opt.Memory, x.conv
	var items []plan.Item
	start := time.Now()
	defer func() { x.tPlan = time.Since(start) - x.tRecall }()
	if k := s.opt.RecallK; k > 0 {
		// As many more as the turns the client sent that may come first.
		recs, err := m.Recall(ctx, mira.Query{Text: text, K: k + min(len(sent), 32), Kinds: recallKinds, HideToolTurns: true, Scope: conv})
		x.tRecall = time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("recall: %w", err)
		}
		for _, r := range recs {
			if r.Kind == mem.KindTurn && (r.Role == "tool" || sent[sameText(r.Text)]) {
				continue
			}
			if len(items) == k {
				break
			}
			r.Why, r.Score = nil, nil
			items = append(items, plan.FromRecord(r))
		}
	}
	return m.Context(ctx, mira.ContextRequest{Items: items, Mode: s.opt.Mode, Budget: s.opt.Budget,
		Encoding: s.opt.Encoding, Scopes: []string{conv}, Log: s.opt.Log})
}

// sameText is a text as turns are compared: its words, single-spaced.
func sameText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// storeRequestTurns stores what the request brings that the store does not
// have yet: the user message it ends with, or the tool results that follow
// the assistant's last message.
func (s *Server) storeRequestTurns(req *chatRequest, x *exchange) {
	n := len(req.msgs)
	if n == 0 {
		return
	}
	var turns []*mem.Entry
	switch last := req.msgs[n-1]; last.Role {
	case "user":
		turns = append(turns, s.turn(x.conv, "user", last.Text))
	case "tool":
		for i := n - 1; i >= 0 && req.msgs[i].Role == "tool"; i-- {
			e := s.turn(x.conv, "tool", req.msgs[i].Text)
			e.Extra["tool_call_id"] = req.msgs[i].ToolCallID
			turns = append([]*mem.Entry{e}, turns...)
		}
	default:
		return
	}
	for _, e := range turns {
		if strings.TrimSpace(e.Body) == "" {
			e.Body = "(no text)"
		}
		if err := s.opt.Writer.Add(e); err != nil {
			x.store = false // the answer to what was refused is not kept either
			x.warnings = append(x.warnings, fmt.Sprintf("the %s turn is not stored: %v", e.Role, err))
			s.opt.Logf("conversation %s: the %s turn is not stored: %v", x.conv, e.Role, err)
			return
		}
	}
	x.stored = true
	s.room(x)
}

// room waits while the writer holds more turns than it commits in about a
// second: under a burst the proxy answers more slowly rather than pile
// up answered turns that a kill would lose (and memory to hold them).
func (s *Server) room(x *exchange) {
	if x.ctx != nil {
		s.opt.Writer.Room(x.ctx)
	}
}

// turn makes a turn entry.
func (s *Server) turn(conv, role, text string) *mem.Entry {
	return &mem.Entry{Kind: mem.KindTurn, Scope: conv, Role: role, Source: "proxy",
		Body: strings.TrimRight(strings.TrimPrefix(text, "\n"), "\n"), Extra: map[string]any{}}
}

// forward sends the (rewritten) request upstream and the reply back,
// gathering the answer, then stores it.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, body []byte, req *chatRequest, x *exchange, start time.Time) {
	ctx, cancel := context.WithTimeout(r.Context(), s.opt.Timeout)
	defer cancel()
	up, err := s.upstreamRequest(ctx, r, bytes.NewReader(body), int64(len(body)))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	// The proxy reads the answer, so it must not come compressed: the
	// transport asks for gzip itself and unpacks it.
	up.Header.Del("Accept-Encoding")
	added := time.Since(start)
	resp, err := s.opt.Client.Do(up)
	if err != nil {
		s.upstreamFailed(w, r, err)
		s.noAnswer(x, "no reply: "+err.Error())
		return
	}
	defer resp.Body.Close()
	h := w.Header()
	copyHeader(h, resp.Header)
	if x.conv != "" {
		h.Set(HeaderConversation, x.conv)
	}
	if x.planID != "" {
		h.Set(HeaderPlan, x.planID)
	}
	for _, warn := range x.warnings {
		h.Add(HeaderWarning, warn)
	}
	h.Add("Server-Timing", x.serverTiming(added))
	w.WriteHeader(resp.StatusCode)
	a := &answer{}
	var tee io.Writer
	var buf bytes.Buffer
	streamed := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	stored := false
	if streamed {
		sse := &sseReader{a: a}
		tee = sse
		if resp.StatusCode == http.StatusOK {
			// A stream's answer is stored as soon as its [DONE] is read,
			// before the client gets it: a client that sends its next
			// message (tool results) at once must not have it stored
			// before the answer it follows.
			tee = writerFunc(func(p []byte) (int, error) {
				sse.Write(p)
				if a.done && !stored && a.failed == "" {
					stored = true
					s.storeAnswer(x, a, "")
				}
				return len(p), nil
			})
		}
	}
	logged := func() {
		s.opt.Logf("POST %s conversation %s → %d (%s added, %s in all, plan %s)", r.URL.Path, x.conv, resp.StatusCode,
			added.Round(time.Microsecond), time.Since(start).Round(time.Millisecond), cmp.Or(x.planID, "none"))
	}
	var cerr error
	if !streamed {
		// A plain reply is read whole and its answer stored before the
		// client gets any of it, for the same reason as a stream's: the
		// client's next message must be stored after the answer it
		// follows. One too large to hold (no chat reply is) goes on as it
		// comes and is stored after.
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxPlainReply+1))
		if err == nil && len(body) <= maxPlainReply {
			a.parseReply(body)
			s.storeAnswer(x, a, replyStatus(r, resp, a, nil))
			w.Write(body) // a client that went away is no error of ours
			logged()
			return
		}
		buf.Write(body[:min(len(body), maxPlainReply)])
		if _, werr := w.Write(body); werr != nil {
			cerr = werr
		} else if err != nil {
			cerr = err
		} else {
			cerr = copyFlushing(w, resp.Body, &limitedBuffer{b: &buf, max: maxPlainReply})
		}
		a.parseReply(buf.Bytes())
	} else {
		cerr = copyFlushing(w, resp.Body, tee)
	}
	if !stored {
		s.storeAnswer(x, a, replyStatus(r, resp, a, cerr))
	}
	logged()
}

// maxPlainReply is how much of a plain (not streamed) reply the proxy
// holds: far more than any chat reply.
const maxPlainReply = 16 << 20

// replyStatus says how a reply ended, for its stored answer: "" when it
// is complete, "interrupted: …" when the client went away during it (what
// it got is kept), "failed: …" when the call failed (an error status, a
// stream cut or ended short, an error event): a failed call's text is the
// server's error, not an answer, and is not stored. cerr is the error
// that stopped passing the reply on.
func replyStatus(r *http.Request, resp *http.Response, a *answer, cerr error) string {
	var ce clientError
	switch {
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return "failed: the server replied " + resp.Status
	case a.failed != "":
		return "failed: " + a.failed
	case r.Context().Err() != nil:
		return "interrupted: the client went away"
	case errors.As(cerr, &ce):
		return "interrupted: " + ce.err.Error()
	case cerr != nil:
		return "failed: the reply broke off: " + cerr.Error()
	case !a.finished:
		return "failed: the reply ended early"
	}
	return ""
}

// writerFunc is a function as an io.Writer.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// limitedBuffer keeps at most max bytes: a plain reply is read for the
// answer only up to a size no chat reply reaches.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// noAnswer stores nothing for a call that brought no answer; the user
// turn stored stays, and its facts are still extracted.
func (s *Server) noAnswer(x *exchange, why string) {
	if !x.stored || !x.store {
		return
	}
	s.opt.Logf("conversation %s: no answer stored: %s", x.conv, why)
	if s.opt.After != nil {
		s.opt.After.Touch(x.conv)
	}
}

// storeAnswer stores the assistant's answer of an exchange whose user
// turn was stored: complete, or with what came of it and why it stopped
// (status, "" for a complete answer).
func (s *Server) storeAnswer(x *exchange, a *answer, status string) {
	if !x.stored || !x.store {
		return
	}
	if strings.HasPrefix(status, "failed: ") || (a.text.Len() == 0 && len(a.calls) == 0 && status != "") {
		s.noAnswer(x, strings.TrimPrefix(status, "failed: "))
		return
	}
	e := s.turn(x.conv, "assistant", a.text.String())
	if a.model != "" {
		e.Extra["model"] = a.model
	}
	if len(a.calls) > 0 {
		e.Extra["tool_calls"] = a.calls
		if strings.TrimSpace(e.Body) == "" {
			e.Body = describeCalls(a.calls)
			e.Extra["no_text"] = true
		}
	}
	if status != "" {
		e.Extra["interrupted"] = true
		e.Extra["status"] = status
		e.Body = strings.TrimSpace(e.Body + "\n\n[" + status + "]")
	}
	if strings.TrimSpace(e.Body) == "" {
		e.Body = "(empty reply)"
	}
	if s.testHookStore != nil {
		s.testHookStore()
	}
	if err := s.opt.Writer.Add(e); err != nil {
		s.opt.Logf("conversation %s: the assistant turn is not stored: %v", x.conv, err)
		return
	}
	if s.opt.After != nil {
		s.opt.After.Touch(x.conv)
	}
	// Before the client has the end of the answer.
	s.room(x)
}
