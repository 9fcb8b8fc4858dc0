// Package httpguard holds the checks Mira's HTTP servers (mira-mcp --http
// and mira-proxy) make before a request reaches them, so that a web page
// the user visits cannot use a server on their machine: the Host must be
// the server's own address (DNS rebinding), a browser's request must come
// from an origin the user allowed (cross-site forms and fetches), the
// bearer token must match when one is set, and a body must arrive at a
// reasonable pace instead of holding a connection open for ever.
package httpguard

import (
	"crypto/subtle"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MinTokenLen is the shortest bearer token a server accepts.
const MinTokenLen = 16

// CheckToken says what is wrong with a bearer token, or nil; "" (no
// token) is fine.
func CheckToken(token string) error {
	if token == "" {
		return nil
	}
	if strings.TrimSpace(token) == "" {
		return fmt.Errorf("the token is only whitespace")
	}
	for _, r := range token {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("the token contains whitespace or a control character")
		}
	}
	if n := utf8.RuneCountInString(token); n < MinTokenLen {
		return fmt.Errorf("the token has %d characters; it needs at least %d (e.g. openssl rand -hex 16)", n, MinTokenLen)
	}
	return nil
}

// CheckOrigin says what is wrong with an origin given to allow, or nil.
func CheckOrigin(origin string) error {
	if _, err := normOrigin(origin); err != nil {
		return err
	}
	return nil
}

// normOrigin is an origin as browsers send it: scheme://host[:port],
// lower case, no path.
func normOrigin(origin string) (string, error) {
	o := strings.ToLower(strings.TrimRight(strings.TrimSpace(origin), "/"))
	scheme, host, ok := strings.Cut(o, "://")
	if !ok || (scheme != "http" && scheme != "https") || host == "" || strings.ContainsAny(host, "/?#@ ") {
		return "", fmt.Errorf("origin %q is not scheme://host[:port] (e.g. https://chat.example.com)", origin)
	}
	return o, nil
}

// Defaults of Options.
const (
	DefaultBodyTimeout = 30 * time.Second
	// DefaultBodyRate is the slowest a body may arrive once
	// DefaultBodyTimeout has passed: a second more for each such many
	// bytes received.
	DefaultBodyRate = 64 << 10
)

// Options configure a Guard.
type Options struct {
	// Token, when set, is the bearer token every request must carry.
	Token string
	// Realm names the server in WWW-Authenticate.
	Realm string
	// ListenHost is the host of the address the server listens on.
	ListenHost string
	// AllowHosts are more Host values to accept (host or host:port), for
	// a server reached by a name or through a port forward.
	AllowHosts []string
	// AllowOrigins are the browser origins allowed to call the server.
	AllowOrigins []string
	// BodyTimeout is how long a body may take to arrive, plus a second
	// for each BodyRate bytes received (defaults above).
	BodyTimeout time.Duration
	BodyRate    int64
	// ExposeHeaders are the reply headers a browser client on an allowed
	// origin may read.
	ExposeHeaders []string
	// Error writes a refusal in the server's own shape (default:
	// http.Error).
	Error func(w http.ResponseWriter, status int, msg string)
}

// Guard wraps a handler with the checks.
type Guard struct {
	opt     Options
	hosts   map[string]bool // host:port or host, lower case
	origins map[string]bool
}

// New returns a Guard; it fails on an origin or host that cannot be one.
func New(opt Options) (*Guard, error) {
	if opt.BodyTimeout <= 0 {
		opt.BodyTimeout = DefaultBodyTimeout
	}
	if opt.BodyRate <= 0 {
		opt.BodyRate = DefaultBodyRate
	}
	if opt.Error == nil {
		opt.Error = func(w http.ResponseWriter, status int, msg string) { http.Error(w, msg, status) }
	}
	g := &Guard{opt: opt, hosts: map[string]bool{}, origins: map[string]bool{}}
	for _, o := range opt.AllowOrigins {
		n, err := normOrigin(o)
		if err != nil {
			return nil, err
		}
		g.origins[n] = true
	}
	for _, h := range opt.AllowHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" || strings.ContainsAny(h, "/?#@ ") {
			return nil, fmt.Errorf("host %q is not host or host:port", h)
		}
		g.hosts[strings.TrimSuffix(h, ".")] = true
	}
	return g, nil
}

// Wrap returns next behind the checks.
func (g *Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.hostOK(r) {
			g.opt.Error(w, http.StatusForbidden, fmt.Sprintf("Host %q is not this server's address (--allow-host accepts it)", r.Host))
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			n, _ := normOrigin(origin)
			if !g.origins[n] {
				g.opt.Error(w, http.StatusForbidden, fmt.Sprintf("requests from web pages are refused: origin %q is not allowed (--allow-origin allows it)", origin))
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
				if rh := r.Header.Get("Access-Control-Request-Headers"); rh != "" {
					h.Set("Access-Control-Allow-Headers", rh)
				}
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
			if len(g.opt.ExposeHeaders) > 0 {
				h.Set("Access-Control-Expose-Headers", strings.Join(g.opt.ExposeHeaders, ", "))
			}
		} else if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
			// A browser's navigation or no-cors request from another site
			// (those carry no Origin).
			g.opt.Error(w, http.StatusForbidden, "requests from web pages are refused (Sec-Fetch-Site: "+site+")")
			return
		}
		if g.opt.Token != "" {
			got := []byte(r.Header.Get("Authorization"))
			if subtle.ConstantTimeCompare(got, []byte("Bearer "+g.opt.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="`+g.opt.Realm+`"`)
				g.opt.Error(w, http.StatusUnauthorized, "missing or wrong bearer token")
				return
			}
		}
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			r.Body = g.timeBody(w, r.Body)
		}
		next.ServeHTTP(w, r)
	})
}

// hostOK says whether the request's Host names this server: localhost or
// a loopback address, the listen address, the address the connection
// came in on, or one allowed, and the port the connection came in on.
// A page whose host name was made to resolve to 127.0.0.1 sends its own
// name, and is refused.
func (g *Guard) hostOK(r *http.Request) bool {
	full := strings.ToLower(r.Host)
	host, port, err := net.SplitHostPort(full)
	if err != nil {
		host, port = strings.Trim(full, "[]"), ""
	}
	host = strings.TrimSuffix(host, ".")
	if g.hosts[host] || g.hosts[net.JoinHostPort(host, port)] {
		return true
	}
	var local netip.AddrPort
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		local, _ = netip.ParseAddrPort(a.String())
	}
	if local.IsValid() {
		lp := fmt.Sprint(local.Port())
		if port != lp && !(port == "" && lp == "80") {
			return false
		}
	}
	if host == "localhost" || host == strings.ToLower(strings.Trim(g.opt.ListenHost, "[]")) {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	return ip.IsLoopback() || (local.IsValid() && ip == local.Addr().Unmap())
}

// HasBody says whether a request has a body.
func HasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// MediaType is the media type of a request's body, lower case, without
// parameters ("" when there is none or it cannot be read).
func MediaType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}
