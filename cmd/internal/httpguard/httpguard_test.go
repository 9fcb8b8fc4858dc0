package httpguard

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestCheckToken(t *testing.T) {
	for tok, ok := range map[string]bool{
		"":                          true,
		"0123456789abcdef":          true,
		"0123456789abcde":           false,
		"                    ":      false,
		"0123456789 abcdef":         false,
		"0123456789abcdef\n":        false,
		"ünïcödé-tökén-öf-16-chárs": true,
	} {
		if err := CheckToken(tok); (err == nil) != ok {
			t.Errorf("CheckToken(%q) = %v", tok, err)
		}
	}
}

// TestHost: the Host names this server (its address, loopback, the
// address the connection came in on, one allowed) with its port, or the
// request is refused.
func TestHost(t *testing.T) {
	g, err := New(Options{ListenHost: "0.0.0.0", AllowHosts: []string{"mira.lan", "box:8080"}})
	if err != nil {
		t.Fatal(err)
	}
	h := g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	local := &net.TCPAddr{IP: net.ParseIP("192.168.1.5"), Port: 7878}
	for host, want := range map[string]int{
		"localhost:7878":        200,
		"localhost.:7878":       200,
		"127.0.0.1:7878":        200,
		"127.0.0.2:7878":        200,
		"[::1]:7878":            200,
		"192.168.1.5:7878":      200, // the address the client connected to
		"mira.lan:7878":         200,
		"box:8080":              200,
		"box:7878":              403,
		"192.168.1.6:7878":      403,
		"evil.example:7878":     403,
		"localhost:7879":        403,
		"localhost":             403,
		"127.0.0.1.nip.io:7878": 403,
	} {
		r := httptest.NewRequest("GET", "/mcp", nil)
		r.Host = host
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(local)))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("Host %s: %d, want %d", host, w.Code, want)
		}
	}
}
