package cli

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
)

// fakeOpenAI is a local stand-in for an OpenAI-compatible server: POST
// /v1/embeddings with the real request and reply shapes (vectors from
// hashed words, so texts sharing words are close), and POST /v1/rerank in
// the Jina/llama.cpp shape (scores from word overlap). It counts the texts
// it embedded so tests can see caching at work.
type fakeOpenAI struct {
	srv      *httptest.Server
	embedded atomic.Int64
	reranks  atomic.Int64
}

const fakeDim = 64

func newFakeOpenAI() *fakeOpenAI {
	f := &fakeOpenAI{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer test-key" {
			http.Error(w, `{"error":{"message":"invalid api key","type":"invalid_request_error"}}`, http.StatusUnauthorized)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type datum struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		resp := struct {
			Object string         `json:"object"`
			Data   []datum        `json:"data"`
			Model  string         `json:"model"`
			Usage  map[string]int `json:"usage"`
		}{Object: "list", Model: req.Model, Usage: map[string]int{"prompt_tokens": 0, "total_tokens": 0}}
		for i, text := range req.Input {
			resp.Data = append(resp.Data, datum{Object: "embedding", Index: i, Embedding: hashVec(text)})
		}
		f.embedded.Add(int64(len(req.Input)))
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
	mux.HandleFunc("POST /v1/rerank", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Query     string   `json:"query"`
			Documents []string `json:"documents"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.reranks.Add(1)
		q := words(req.Query)
		type result struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		}
		var out struct {
			Results []result `json:"results"`
		}
		for i, d := range req.Documents {
			s := 0.0
			for w := range words(d) {
				if q[w] {
					s++
				}
			}
			out.Results = append(out.Results, result{i, s})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	f.srv = httptest.NewServer(mux)
	return f
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) {
		m[w] = true
	}
	return m
}

func hashVec(text string) []float32 {
	v := make([]float32, fakeDim)
	for w := range words(text) {
		h := fnv.New32a()
		h.Write([]byte(w))
		x := h.Sum32()
		v[x%fakeDim] += 1
		v[(x>>8)%fakeDim] += 0.5
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	if n == 0 {
		v[0] = 1
		return v
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(n))
	}
	return v
}
