// Package locomo reads the LoCoMo turn-retrieval benchmark (dialog turns,
// questions with evidence turn ids) and scores rankings the way its
// score.py does: recall@k and hit@k for k = 1, 5, 10. The retrieval tests
// of the embedders and of the index share it.
package locomo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Turn is one dialog turn of dev/turns.jsonl.
type Turn struct {
	ID           string `json:"id"`
	Conversation string `json:"conversation"`
	Session      int    `json:"session"`
	Date         string `json:"date"` // "1:56 pm on 8 May, 2023": the session's
	Speaker      string `json:"speaker"`
	Text         string `json:"text"`
}

// Time parses the turn's session date.
func (t Turn) Time() (time.Time, error) {
	return time.Parse("3:04 pm on 2 January, 2006", t.Date)
}

// Question is one line of dev/questions.jsonl.
type Question struct {
	Conversation string   `json:"conversation"`
	Question     string   `json:"question"`
	Category     int      `json:"category"`
	Evidence     []string `json:"evidence"`
	QID          int      `json:"-"` // its 0-based line number, as score.py counts
}

// Load reads the dev split under dir (the benchmark's directory).
func Load(dir string) ([]Turn, []Question, error) {
	turns, err := readJSONL[Turn](filepath.Join(dir, "dev", "turns.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	qs, err := readJSONL[Question](filepath.Join(dir, "dev", "questions.jsonl"))
	for i := range qs {
		qs[i].QID = i
	}
	return turns, qs, err
}

func readJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// Observation is one line of dev/observations.jsonl: a fact the
// benchmark's authors had a model write about a session, with the turns it
// rests on.
type Observation struct {
	Conversation string   `json:"conversation"`
	Session      int      `json:"session"`
	Speaker      string   `json:"speaker"`
	Text         string   `json:"text"`
	Evidence     []string `json:"evidence"`
}

// LoadObservations reads dev/observations.jsonl under dir.
func LoadObservations(dir string) ([]Observation, error) {
	return readJSONL[Observation](filepath.Join(dir, "dev", "observations.jsonl"))
}

// Ks are the cut-offs scored.
var Ks = [3]int{1, 5, 10}

// Metrics accumulates recall@k (the share of a question's evidence in the
// top k, ids counted once), hit@k (any of it in the top k) and the
// reciprocal rank of the first evidence turn within the top 10.
type Metrics struct {
	N           int
	Recall, Hit [3]float64
	RR          float64 // summed reciprocal ranks of the first evidence id (0 past the top 10)
}

// Add scores one ranking against its question's evidence.
func (m *Metrics) Add(ranking, evidence []string) {
	m.N++
	ev := map[string]bool{}
	for _, e := range evidence {
		ev[e] = true
	}
	var top []string
	seen := map[string]bool{}
	for _, id := range ranking {
		if !seen[id] {
			seen[id] = true
			top = append(top, id)
		}
	}
	for i, id := range top[:min(Ks[len(Ks)-1], len(top))] {
		if ev[id] {
			m.RR += 1 / float64(i+1)
			break
		}
	}
	for i, k := range Ks {
		found := 0
		for _, id := range top[:min(k, len(top))] {
			if ev[id] {
				found++
			}
		}
		if len(ev) > 0 {
			m.Recall[i] += float64(found) / float64(len(ev))
		}
		if found > 0 {
			m.Hit[i]++
		}
	}
}

// Merge adds o's questions to m.
func (m *Metrics) Merge(o Metrics) {
	m.N += o.N
	m.RR += o.RR
	for i := range Ks {
		m.Recall[i] += o.Recall[i]
		m.Hit[i] += o.Hit[i]
	}
}

// MRR is the mean reciprocal rank of the first evidence id, 0 for a
// question with none in the top 10.
func (m Metrics) MRR() float64 {
	if m.N == 0 {
		return 0
	}
	return m.RR / float64(m.N)
}

// At returns the averages recall@Ks[i] and hit@Ks[i].
func (m Metrics) At(i int) (recall, hit float64) {
	if m.N == 0 {
		return 0, 0
	}
	return m.Recall[i] / float64(m.N), m.Hit[i] / float64(m.N)
}

// String is R@1 R@5 R@10, then hit@1 hit@5 hit@10, then MRR.
func (m Metrics) String() string {
	if m.N == 0 {
		return "-"
	}
	r1, h1 := m.At(0)
	r5, h5 := m.At(1)
	r10, h10 := m.At(2)
	return fmt.Sprintf("%.3f  %.3f  %.3f   %.3f  %.3f  %.3f   %.3f", r1, r5, r10, h1, h5, h10, m.MRR())
}
