package llm

import (
	"errors"
	"testing"

	"github.com/miramem/mira/internal/retry"
)

func TestHTTPErrorMessage(t *testing.T) {
	const (
		keyHint = " (check the API key)"
		urlHint = " (check the model name and the base URL, which usually ends in /v1)"
	)
	tests := []struct {
		status  int
		message string
		want    string
	}{
		{400, "bad messages", "server replied 400 Bad Request: bad messages"},
		{401, "invalid api key", "server replied 401 Unauthorized: invalid api key" + keyHint},
		{403, "", "server replied 403 Forbidden" + keyHint},
		{404, "404 page not found", "server replied 404 Not Found: 404 page not found" + urlHint},
		{405, "", "server replied 405 Method Not Allowed" + urlHint},
		{500, "d", "server replied 500 Internal Server Error: d"},
		{529, "Overloaded", "server replied 529: Overloaded"},
	}
	for _, tt := range tests {
		err := httpError(retry.Reply{Status: tt.status, Message: tt.message})
		if got := err.Error(); got != tt.want {
			t.Errorf("status %d: Error() = %q, want %q", tt.status, got, tt.want)
		}
		var he *HTTPError
		if !errors.As(err, &he) || he.StatusCode != tt.status || he.Message != tt.message {
			t.Errorf("status %d: error %#v is not an *HTTPError with its status and message", tt.status, err)
		}
	}
}
