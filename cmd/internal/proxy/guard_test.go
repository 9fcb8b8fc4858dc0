package proxy

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miramem/mira/cmd/internal/httpguard/httpguardtest"
)

// countingUpstream answers every call with a chat reply and counts them.
func countingUpstream(t *testing.T) (root string, calls func() []string) {
	var mu sync.Mutex
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Access-Control-Allow-Origin", "*")
		io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(up.Close)
	return up.URL + "/v1", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

const chatBody = `{"model":"m","messages":[{"role":"user","content":"remember that my bank PIN hint is the cat"}]}`

// TestRefusesWebPages: what a web page can send to the proxy on loopback
// (a cross-site form, a fetch from another origin, a request through a
// host name rebound to 127.0.0.1, a route no OpenAI client uses) is
// refused before it reaches the upstream or the store.
func TestRefusesWebPages(t *testing.T) {
	root, calls := countingUpstream(t)
	f := newFixture(t, nil, root, nil, nil)
	u, _ := url.Parse(f.url)
	_, port, _ := net.SplitHostPort(u.Host)
	do := func(method, path, body string, h ...string) *http.Response {
		t.Helper()
		return httpguardtest.Do(t, method, f.url+path, body, h...)
	}
	for _, c := range []struct {
		name         string
		method, path string
		body         string
		h            []string
		want         int
	}{
		{"a form posting text/plain", "POST", "/chat/completions", chatBody, []string{"Content-Type", "text/plain"}, 415},
		{"a form posting urlencoded", "POST", "/chat/completions", chatBody, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415},
		{"a form posting multipart", "POST", "/chat/completions", chatBody, []string{"Content-Type", "multipart/form-data; boundary=x"}, 415},
		{"a body without a type", "POST", "/embeddings", `{"model":"e","input":"x"}`, nil, 415},
		{"a fetch from another origin", "POST", "/chat/completions", chatBody, []string{"Content-Type", "application/json", "Origin", "https://evil.example"}, 403},
		{"an opaque origin", "POST", "/chat/completions", chatBody, []string{"Content-Type", "application/json", "Origin", "null"}, 403},
		{"a cross-site navigation", "GET", "/models", "", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"a rebound host name", "POST", "/chat/completions", chatBody, []string{"Content-Type", "application/json", "Host", "evil.example:" + port}, 403},
		{"a rebound host name reading", "GET", "/models", "", []string{"Host", "evil.example:" + port}, 403},
		{"loopback on another port", "GET", "/models", "", []string{"Host", "127.0.0.1:1"}, 403},
		{"a route of no OpenAI client", "GET", "/secrets", "", nil, 404},
		{"an admin route", "GET", "/organization/users", "", nil, 404},
		{"a method the API does not use", "PUT", "/models", `{}`, []string{"Content-Type", "application/json"}, 405},
		{"a method the API does not use on chat", "DELETE", "/chat/completions", "", nil, 405},
	} {
		if resp := do(c.method, c.path, c.body, c.h...); resp.StatusCode != c.want {
			t.Errorf("%s: %s %s → %d, want %d", c.name, c.method, c.path, resp.StatusCode, c.want)
		}
	}
	if got := calls(); len(got) != 0 {
		t.Errorf("the upstream was called: %v", got)
	}
	f.idle()
	if turns := f.turns("proxy"); len(turns) != 0 {
		t.Errorf("stored %d turns from refused requests: %q", len(turns), turns[0].Body)
	}
	// What an OpenAI client sends still goes through, by every loopback
	// name, and the upstream's CORS headers do not reach the client.
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port} {
		resp := do("POST", "/chat/completions", chatBody, "Content-Type", "application/json; charset=utf-8", "Host", host)
		if resp.StatusCode != 200 {
			t.Errorf("Host %s: %d, want 200", host, resp.StatusCode)
		}
		if v := resp.Header.Get("Access-Control-Allow-Origin"); v != "" {
			t.Errorf("the reply allows origin %q", v)
		}
	}
	for _, r := range [][2]string{{"GET", "/models"}, {"GET", "/models/gpt-4.1"}, {"GET", "/files/file-abc/content"}, {"DELETE", "/responses/resp_1"}, {"POST", "/batches/batch_1/cancel"}} {
		if resp := do(r[0], r[1], ""); resp.StatusCode != 200 {
			t.Errorf("%s %s: %d, want 200", r[0], r[1], resp.StatusCode)
		}
	}
	if resp := do("POST", "/files", "--x\r\n\r\n--x--\r\n", "Content-Type", "multipart/form-data; boundary=x"); resp.StatusCode != 200 {
		t.Errorf("POST /v1/files (multipart): %d, want 200", resp.StatusCode)
	}
}

// TestAllowOrigin: a browser client on an origin the user allowed gets
// through, with the CORS headers its browser needs; others do not.
func TestAllowOrigin(t *testing.T) {
	root, _ := countingUpstream(t)
	f := newFixture(t, nil, root, nil, func(o *Options) { o.AllowOrigins = []string{"https://chat.example"} })
	pre, _ := http.NewRequest("OPTIONS", f.url+"/chat/completions", nil)
	pre.Header.Set("Origin", "https://chat.example")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	pre.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
	resp, err := http.DefaultClient.Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://chat.example" ||
		!strings.Contains(strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers")), "authorization") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	for origin, want := range map[string]int{"https://chat.example": 200, "https://chat.example.evil": 403, "http://chat.example": 403} {
		req, _ := http.NewRequest("POST", f.url+"/chat/completions", strings.NewReader(chatBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Origin %s: %d, want %d", origin, resp.StatusCode, want)
		}
		if want == 200 && resp.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("Origin %s: Access-Control-Allow-Origin %q", origin, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
}

// TestSlowBody: a client that trickles its body is cut off instead of
// holding a connection (and a goroutine) forever.
func TestSlowBody(t *testing.T) {
	root, calls := countingUpstream(t)
	f := newFixture(t, nil, root, nil, func(o *Options) { o.BodyTimeout = 300 * time.Millisecond })
	u, _ := url.Parse(f.url)
	for _, path := range []string{"/v1/chat/completions", "/v1/embeddings"} {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		io.WriteString(conn, "POST "+path+" HTTP/1.1\r\nHost: "+u.Host+"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
		// The test's own bound: far longer than the body may take.
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		done := make(chan error, 1)
		go func() {
			_, err := io.Copy(io.Discard, conn)
			done <- err
		}()
		tick := time.NewTicker(50 * time.Millisecond)
	trickle:
		for {
			select {
			case err := <-done:
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatalf("%s: the connection of a trickled body is still open", path)
				}
				break trickle
			case <-tick.C:
				conn.Write([]byte(" ")) // one byte at a time, forever
			}
		}
		tick.Stop()
	}
	// The chat call never went upstream (the embeddings call went with its
	// body streaming, and was cut with it).
	for _, c := range calls() {
		if strings.Contains(c, "chat") {
			t.Errorf("the upstream was called: %v", c)
		}
	}
	f.idle()
	if turns := f.turns("proxy"); len(turns) != 0 {
		t.Errorf("stored %d turns of a cut request", len(turns))
	}
}

// TestStreamOutlivesBodyTimeout: the body timeout bounds the request,
// never the answer: a stream that takes longer still reaches its end.
func TestStreamOutlivesBodyTimeout(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 6 {
			io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"`+string(rune('a'+i))+`"}}]}`+"\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer up.Close()
	f := newFixture(t, nil, up.URL+"/v1", nil, func(o *Options) { o.BodyTimeout = 100 * time.Millisecond })
	resp, err := http.Post(f.url+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"slowly"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		t.Errorf("stream cut: %v\n%s", err, b)
	}
}

// TestFailedCallNotStored: an upstream failure (an error status, a stream
// cut short, a stream that ends in an error event) stores no assistant
// turn: its text is the server's error, not an answer to remember.
func TestFailedCallNotStored(t *testing.T) {
	chunk := func(s string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"` + s + `"},"finish_reason":null}]}` + "\n\n"
	}
	replies := map[string]func(w http.ResponseWriter){
		"status": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"message":"Rate limit reached","type":"requests"}}`)
		},
		"stream-status": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(500)
			io.WriteString(w, `data: {"error":{"message":"internal error"}}`+"\n\n")
		},
		"cut": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk("The first half"))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection breaks
		},
		"ended": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk("The first half"))
		},
		"error-event": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk("The first half"))
			io.WriteString(w, `data: {"error":{"message":"The server had an error while processing your request","type":"server_error"}}`+"\n\n")
			io.WriteString(w, "data: [DONE]\n\n")
		},
		"error-event-named": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, chunk("The first half"))
			io.WriteString(w, "event: error\n"+`data: {"message":"overloaded"}`+"\n\n")
		},
		"plain-not-a-reply": func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"error":{"message":"model is loading"}}`)
		},
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		replies[r.Header.Get("X-Case")](w)
	}))
	defer up.Close()
	f := newFixture(t, nil, up.URL+"/v1", nil, nil)
	for name := range replies {
		req, _ := http.NewRequest("POST", f.url+"/chat/completions", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"question for `+name+`"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Case", name)
		req.Header.Set(HeaderConversation, name)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		f.idle()
		turns := f.turns(name)
		if len(turns) != 1 || turns[0].Role != "user" {
			var got []string
			for _, e := range turns {
				got = append(got, e.Role+": "+e.Body)
			}
			t.Errorf("%s: stored %q, want the user turn alone", name, got)
		}
	}
}
