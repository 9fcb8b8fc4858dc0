package embed

import (
	"testing"
	"time"
)

func TestRetryDefaults(t *testing.T) {
	tests := []struct {
		retries  int
		backoff  time.Duration
		wantMax  int
		wantBase time.Duration
	}{
		{0, 0, defaultMaxRetries, defaultBackoff},
		{-1, 0, 0, defaultBackoff},
		{-1, -time.Second, 0, defaultBackoff},
		{3, time.Second, 3, time.Second},
	}
	for _, tt := range tests {
		o, err := NewOpenAI(OpenAIConfig{Model: "m", MaxRetries: tt.retries, Backoff: tt.backoff})
		if err != nil {
			t.Fatal(err)
		}
		r := NewReranker(RerankConfig{BaseURL: "http://localhost:8080/v1", MaxRetries: tt.retries, Backoff: tt.backoff})
		for name, p := range map[string]struct {
			max  int
			base time.Duration
		}{"OpenAI": {o.retry.Max, o.retry.Base}, "Reranker": {r.retry.Max, r.retry.Base}} {
			if p.max != tt.wantMax || p.base != tt.wantBase {
				t.Errorf("%s with MaxRetries %d, Backoff %v: retries %d, base %v, want %d, %v",
					name, tt.retries, tt.backoff, p.max, p.base, tt.wantMax, tt.wantBase)
			}
		}
	}
}
