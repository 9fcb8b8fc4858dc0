package locomo

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestMetrics checks the scores against numbers worked out by hand.
func TestMetrics(t *testing.T) {
	var m Metrics
	m.Add([]string{"x", "a", "a", "y", "z", "w", "b"}, []string{"a", "b"}) // a 2nd, b 6th (the repeat of a counts once)
	m.Add([]string{"c"}, []string{"c"})
	m.Add(nil, []string{"e"})
	want := [3][2]float64{{1.0 / 3, 1.0 / 3}, {(0.5 + 1) / 3, 2.0 / 3}, {(1 + 1) / 3.0, 2.0 / 3}}
	for i := range Ks {
		r, h := m.At(i)
		if math.Abs(r-want[i][0]) > 1e-9 || math.Abs(h-want[i][1]) > 1e-9 {
			t.Errorf("@%d = recall %v hit %v, want %v %v", Ks[i], r, h, want[i][0], want[i][1])
		}
	}
	if mrr := m.MRR(); math.Abs(mrr-(0.5+1+0)/3) > 1e-9 {
		t.Errorf("MRR = %v, want %v", mrr, 1.5/3)
	}
	var sum Metrics
	sum.Merge(m)
	sum.Merge(m)
	if r, _ := sum.At(2); sum.N != 6 || math.Abs(r-2.0/3) > 1e-9 {
		t.Errorf("Merge: N %d recall@10 %v", sum.N, r)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "dev"), 0o755)
	os.WriteFile(filepath.Join(dir, "dev", "turns.jsonl"), []byte(`{"id":"c:D1:1","conversation":"c","session":1,"date":"1:56 pm on 8 May, 2023","speaker":"A","text":"hi"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "dev", "questions.jsonl"), []byte(`{"conversation":"c","question":"q0","category":4,"evidence":["c:D1:1"]}`+"\n"+`{"conversation":"c","question":"q1","category":2,"evidence":[]}`+"\n"), 0o644)
	turns, qs, err := Load(dir)
	if err != nil || len(turns) != 1 || len(qs) != 2 || qs[1].QID != 1 || qs[0].Evidence[0] != "c:D1:1" {
		t.Fatalf("Load = %v, %v, %v", turns, qs, err)
	}
	when, err := turns[0].Time()
	if err != nil || !when.Equal(time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)) {
		t.Errorf("Time = %v, %v", when, err)
	}
	os.WriteFile(filepath.Join(dir, "dev", "observations.jsonl"), []byte(`{"conversation":"c","session":1,"speaker":"A","text":"A greets.","evidence":["c:D1:1"]}`+"\n"), 0o644)
	if obs, err := LoadObservations(dir); err != nil || len(obs) != 1 || obs[0].Evidence[0] != "c:D1:1" || obs[0].Text != "A greets." {
		t.Errorf("LoadObservations = %v, %v", obs, err)
	}
	os.WriteFile(filepath.Join(dir, "dev", "questions.jsonl"), []byte("{oops\n"), 0o644)
	if _, _, err := Load(dir); err == nil {
		t.Error("Load of a broken file succeeded")
	}
}
