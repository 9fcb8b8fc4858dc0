// Package httpguardtest sends the requests with which the tests of the
// servers behind httpguard play a web page or a rebound name: any method,
// body and headers, the Host among them.
package httpguardtest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Do sends method to url with body (none when "") and headers h, pairs
// of name and value in which "Host" sets the request's Host; it reads and
// closes the reply's body and returns the reply.
func Do(t testing.TB, method, url, body string, h ...string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(h); i += 2 {
		if h[i] == "Host" {
			req.Host = h[i+1]
		} else {
			req.Header.Set(h[i], h[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}
