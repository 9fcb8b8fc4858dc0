package history

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

func halfLives(d time.Duration, h time.Duration) float64 {
	return math.Exp2(-d.Hours() / h.Hours())
}

func readAll(t *testing.T, dir string) []Commit {
	t.Helper()
	cs, _, err := Read(context.Background(), dir, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestStatsSample(t *testing.T) {
	s := newSample(t)
	var st Stats
	st.Add(readAll(t, s.dir))
	h := DefaultHalfLife
	newest := day("2020-06-01")
	age := func(d string) float64 { return halfLives(newest.Sub(day(d)), h) }

	if got := st.Newest(); !got.Equal(newest) {
		t.Errorf("Newest = %v, want %v", got, newest)
	}
	// a.go: with b.go in c1 (2 files: 1) and c2 (3 files: 1/2); with
	// c.go, now sub/c2.go, in c2 (1/2), c3 (1) and c8 (1/2). c7 is over
	// the cap; d.go was removed.
	want := []Cochange{
		{Path: "sub/c2.go", Count: 3, Weight: 0.5*age("2020-01-10") + age("2020-02-01") + 0.5, Last: newest},
		{Path: "b.go", Count: 2, Weight: age("2020-01-01") + 0.5*age("2020-01-10"), Last: day("2020-01-10")},
	}
	got := st.Cochange("a.go", 10, time.Time{})
	checkCochange(t, "a.go", got, want)
	checkCochange(t, "a.go k=1", st.Cochange("a.go", 1, time.Time{}), want[:1])
	// A later now scales every weight alike.
	later := newest.Add(h)
	for i := range want {
		want[i].Weight /= 2
	}
	checkCochange(t, "a.go a half-life later", st.Cochange("a.go", 10, later), want)

	checkCochange(t, "sub/c2.go", st.Cochange("sub/c2.go", 0, time.Time{}), []Cochange{
		{Path: "a.go", Count: 3, Weight: 0.5*age("2020-01-10") + age("2020-02-01") + 0.5, Last: newest},
		{Path: "b.go", Count: 1, Weight: 0.5 * age("2020-01-10"), Last: day("2020-01-10")},
	})
	if got := st.Cochange("c.go", 0, time.Time{}); got != nil {
		t.Errorf("c.go was renamed, yet has partners %v", got)
	}
	if got := st.Cochange("gen/f00.go", 0, time.Time{}); len(got) != 0 {
		t.Errorf("a file only in a commit over the cap has partners %v", got)
	}
	if got := st.Cochange("nothing.go", 0, time.Time{}); got != nil {
		t.Errorf("unknown file has partners %v", got)
	}

	experts := st.Experts("a.go", time.Time{})
	wantExperts := []Expert{
		{Author: "Alice", Email: "alice@example.com", Commits: 3, Weight: age("2020-01-01") + age("2020-02-01") + 1, Last: newest},
		{Author: "Bob", Email: "bob@example.com", Commits: 1, Weight: age("2020-01-10"), Last: day("2020-01-10")},
		{Author: "Carol", Email: "carol@example.com", Commits: 1, Weight: 0, Last: day("2020-05-01")},
	}
	if len(experts) != len(wantExperts) {
		t.Fatalf("experts %+v, want %+v", experts, wantExperts)
	}
	for i, w := range wantExperts {
		g := experts[i]
		if g.Author != w.Author || g.Email != w.Email || g.Commits != w.Commits || !near(g.Weight, w.Weight) || !g.Last.Equal(w.Last) {
			t.Errorf("expert %d = %+v, want %+v", i, g, w)
		}
	}

	if got, want := hashes(st.Log("a.go", 0)), []string{s.c["c8"], s.c["c7"], s.c["c3"], s.c["c2"], s.c["c1"]}; !reflect.DeepEqual(got, want) {
		t.Errorf("Log(a.go) = %v, want %v", got, want)
	}
	if got, want := hashes(st.Log("a.go", 2)), []string{s.c["c8"], s.c["c7"]}; !reflect.DeepEqual(got, want) {
		t.Errorf("Log(a.go, 2) = %v, want %v", got, want)
	}
	// The renamed file keeps the history of its old name.
	log := st.Log("sub/c2.go", 0)
	if got, want := hashes(log), []string{s.c["c8"], s.c["c5"], s.c["c3"], s.c["c2"]}; !reflect.DeepEqual(got, want) {
		t.Errorf("Log(sub/c2.go) = %v, want %v", got, want)
	}
	c2 := log[3]
	if c2.Subject != "add c" || c2.Author != "Bob" || c2.Email != "bob@example.com" || !c2.When.Equal(day("2020-01-10")) ||
		!reflect.DeepEqual(c2.Files, []string{"a.go", "b.go", "sub/c2.go"}) {
		t.Errorf("Log entry %+v", c2)
	}

	if f, ok := st.File("d.go", time.Time{}); !ok || !f.Gone || f.Commits != 2 {
		t.Errorf("File(d.go) = %+v, %v; want removed after 2 commits", f, ok)
	}
	if f, ok := st.File("a.go", time.Time{}); !ok || f.Gone || f.Commits != 5 || !f.Last.Equal(newest) {
		t.Errorf("File(a.go) = %+v, %v", f, ok)
	}
}

func checkCochange(t *testing.T, what string, got, want []Cochange) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %+v, want %+v", what, got, want)
		return
	}
	for i, w := range want {
		g := got[i]
		if g.Path != w.Path || g.Count != w.Count || !near(g.Weight, w.Weight) || !g.Last.Equal(w.Last) {
			t.Errorf("%s: partner %d = %+v, want %+v", what, i, g, w)
		}
	}
}

func commit(hash, who string, when time.Time, files ...string) Commit {
	name, email, _ := strings.Cut(who, " <")
	return Commit{Hash: hash, Author: name, Email: strings.TrimSuffix(email, ">"), When: when, Subject: hash, Files: files}
}

// newestFirst reverses commits given oldest first.
func newestFirst(cs ...Commit) []Commit {
	out := make([]Commit, len(cs))
	for i, c := range cs {
		out[len(cs)-1-i] = c
	}
	return out
}

// The half-life decides between many old commits and a recent one.
func TestStatsHalfLife(t *testing.T) {
	cs := newestFirst(
		commit("1", alice, day("2019-01-01"), "x.go", "old.go"),
		commit("2", alice, day("2019-01-02"), "x.go", "old.go"),
		commit("3", alice, day("2019-01-03"), "x.go", "old.go"),
		commit("4", alice, day("2020-06-01"), "x.go", "new.go"),
	)
	for _, c := range []struct {
		halfLife time.Duration
		first    string
	}{{0, "new.go"}, {90 * 24 * time.Hour, "new.go"}, {10 * 365 * 24 * time.Hour, "old.go"}} {
		st := NewStats(Options{HalfLife: c.halfLife})
		st.Add(cs)
		got := st.Cochange("x.go", 0, time.Time{})
		if len(got) != 2 || got[0].Path != c.first {
			t.Errorf("half-life %v: %+v, want %s first", c.halfLife, got, c.first)
		}
	}
}

// A commit's pairs weigh 1/(n-1); a commit over MaxFiles gives none, one
// at MaxFiles does.
func TestStatsCommitSize(t *testing.T) {
	when := day("2020-01-01")
	st := NewStats(Options{MaxFiles: 4})
	st.Add(newestFirst(
		commit("1", alice, when, "a", "b"),
		commit("2", alice, when, "a", "c", "d", "e"),
		commit("3", alice, when, "a", "f", "g", "h", "i"),
	))
	checkCochange(t, "a", st.Cochange("a", 0, time.Time{}), []Cochange{
		{Path: "b", Count: 1, Weight: 1, Last: when},
		{Path: "c", Count: 1, Weight: 1.0 / 3, Last: when},
		{Path: "d", Count: 1, Weight: 1.0 / 3, Last: when},
		{Path: "e", Count: 1, Weight: 1.0 / 3, Last: when},
	})
	if got := st.Cochange("f", 0, time.Time{}); len(got) != 0 {
		t.Errorf("f, only in a commit over the cap: %+v", got)
	}
	if f, _ := st.File("f", time.Time{}); f.Commits != 1 || f.Weight != 0 {
		t.Errorf("f: %+v, want 1 commit of no weight", f)
	}
}

// A file keeps its heaviest partners when it has too many.
func TestStatsPartnerBound(t *testing.T) {
	st := NewStats(Options{Partners: 2})
	var cs []Commit
	// x.go changes with p0 once, p1 twice, ... p5 six times, then with
	// p6 once: its partners outgrow 2*2 and the lightest go.
	for i := range 6 {
		for j := 0; j <= i; j++ {
			cs = append(cs, commit(fmt.Sprintf("%d-%d", i, j), alice, day("2020-01-01"), "x.go", fmt.Sprintf("p%d", i)))
		}
	}
	cs = append(cs, commit("last", alice, day("2020-01-01"), "x.go", "p6"))
	st.Add(newestFirst(cs...))
	got := st.Cochange("x.go", 0, time.Time{})
	var paths []string
	for _, c := range got {
		paths = append(paths, c.Path)
	}
	if len(got) > 4 || len(got) < 2 || got[0].Path != "p5" || got[0].Count != 6 {
		t.Errorf("partners %v (%+v), want at most 4, p5 first", paths, got)
	}
	if len(st.files[st.pathID["x.go"]].partners) > 4 {
		t.Errorf("x.go keeps %d partners", len(st.files[st.pathID["x.go"]].partners))
	}
}

func encode(t *testing.T, s *Stats) []byte {
	t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, b []byte) *Stats {
	t.Helper()
	var s Stats
	if err := s.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	return &s
}

// Adding a history in parts, encoding and decoding between the parts,
// gives the same Stats, byte for byte, as adding it at once.
func TestStatsIncremental(t *testing.T) {
	s := newSample(t)
	all := readAll(t, s.dir)
	whole := NewStats(Options{})
	whole.Add(all)
	want := encode(t, whole)
	for k := range len(all) + 1 {
		a, b := all[k:], all[:k] // a older, b newer
		st := NewStats(Options{})
		st.Add(a)
		st = decode(t, encode(t, st))
		st.Add(b)
		if got := encode(t, st); !bytes.Equal(got, want) {
			t.Errorf("split at %d: encoding differs", k)
		}
	}
	// Read from the last commit of a part gives the next part.
	part, head, err := Read(context.Background(), s.dir, s.c["c4"], 0)
	if err != nil || head != s.c["c8"] {
		t.Fatal(head, err)
	}
	old, _, err := Read(context.Background(), s.dir, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	st := NewStats(Options{})
	st.Add(old[len(part):])
	st = decode(t, encode(t, st))
	st.Add(part)
	if !bytes.Equal(encode(t, st), want) {
		t.Error("Read since c4 added to the rest differs from the whole")
	}
}

// randomHistory makes n commits over a few files, with renames and
// removals, many over small bounds.
func randomHistory(seed uint64, n int) []Commit {
	rng := rand.New(rand.NewPCG(seed, 1))
	names := make([]string, 30)
	for i := range names {
		names[i] = fmt.Sprintf("f%02d", i)
	}
	authors := []string{alice, bob, carol, "Dan <dan@example.com>", "dan <DAN@example.com>"}
	var cs []Commit
	when := day("2015-01-01")
	for i := range n {
		when = when.Add(time.Duration(rng.IntN(72)-12) * time.Hour) // sometimes out of order
		c := commit(fmt.Sprintf("%040x", i), authors[rng.IntN(len(authors))], when)
		k := 1 + rng.IntN(8)
		seen := map[string]bool{}
		for range k {
			p := names[rng.IntN(len(names))]
			if !seen[p] {
				seen[p] = true
				c.Files = append(c.Files, p)
			}
		}
		if rng.IntN(10) == 0 {
			j := rng.IntN(len(names))
			to := fmt.Sprintf("r%d/%s", i, names[j])
			if rng.IntN(3) == 0 {
				to = names[rng.IntN(len(names))] // onto an existing name
			}
			if to != names[j] {
				c.Renames = []Rename{{From: names[j], To: to}}
				c.Files = append(c.Files, to)
				names[j] = to
			}
		}
		if rng.IntN(15) == 0 {
			c.Removed = []string{c.Files[0]}
		}
		cs = append(cs, c)
	}
	return newestFirst(cs...)
}

func TestStatsIncrementalRandom(t *testing.T) {
	opt := Options{HalfLife: 30 * 24 * time.Hour, MaxFiles: 6, Partners: 3, Authors: 2, LogLen: 4}
	for seed := range uint64(5) {
		all := randomHistory(seed, 400)
		whole := NewStats(opt)
		whole.Add(all)
		want := encode(t, whole)
		rng := rand.New(rand.NewPCG(seed, 2))
		for range 10 {
			i := rng.IntN(len(all) + 1)
			j := rng.IntN(len(all) + 1)
			i, j = min(i, j), max(i, j)
			st := NewStats(opt)
			st.Add(all[j:])
			st = decode(t, encode(t, st))
			st.Add(all[i:j])
			st = decode(t, encode(t, st))
			st.Add(all[:i])
			if got := encode(t, st); !bytes.Equal(got, want) {
				t.Fatalf("seed %d, parts at %d and %d: encoding differs", seed, i, j)
			}
			if !reflect.DeepEqual(st.Cochange("f01", 0, time.Time{}), whole.Cochange("f01", 0, time.Time{})) ||
				!reflect.DeepEqual(st.Experts("f02", time.Time{}), whole.Experts("f02", time.Time{})) ||
				!reflect.DeepEqual(st.Log("f03", 0), whole.Log("f03", 0)) {
				t.Fatalf("seed %d: answers differ", seed)
			}
		}
	}
}

// The bounds hold: no file keeps more than twice its partners or
// authors, nor more than LogLen commits, and commits no log holds are
// dropped.
func TestStatsBounds(t *testing.T) {
	opt := Options{MaxFiles: 6, Partners: 3, Authors: 2, LogLen: 4}
	st := NewStats(opt)
	st.Add(randomHistory(7, 2000))
	live := 0
	for _, c := range st.commits {
		if c.hash != "" {
			live++
		}
	}
	for i, f := range st.files {
		if len(f.partners) > 2*opt.Partners || len(f.authors) > 2*opt.Authors || len(f.log) > opt.LogLen {
			t.Errorf("%s: %d partners, %d authors, %d log entries", st.paths[i], len(f.partners), len(f.authors), len(f.log))
		}
	}
	if max := len(st.files) * opt.LogLen; live > max {
		t.Errorf("%d commits kept, at most %d are in logs", live, max)
	}
}

func TestStatsGob(t *testing.T) {
	st := NewStats(Options{})
	st.Add(randomHistory(1, 100))
	st.Head = "abc"
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(st); err != nil {
		t.Fatal(err)
	}
	var back Stats
	if err := gob.NewDecoder(&buf).Decode(&back); err != nil {
		t.Fatal(err)
	}
	if back.Head != "abc" || !bytes.Equal(encode(t, &back), encode(t, st)) {
		t.Error("gob round trip differs")
	}
}

// Damaged data is refused with the byte where it went wrong, and the
// Stats is left as it was.
func TestStatsUnmarshalBad(t *testing.T) {
	st := NewStats(Options{})
	st.Add(randomHistory(2, 50))
	good := encode(t, st)
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not encoded history stats"},
		{"other", []byte("hello world, this is not it"), "not encoded history stats"},
		{"version", append([]byte("MIRAHIST\x09"), good[len(magic):]...), "format version 9"},
		{"cut", good[:len(good)/2], "byte "},
		{"trailing", append(bytes.Clone(good), 0), "trailing data"},
	} {
		var s Stats
		s.Head = "kept"
		err := s.UnmarshalBinary(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
		if s.Head != "kept" {
			t.Errorf("%s: Stats changed", c.name)
		}
	}
}

func FuzzStatsUnmarshal(f *testing.F) {
	st := NewStats(Options{Partners: 2, Authors: 1, LogLen: 2, MaxFiles: 4})
	st.Add(randomHistory(3, 30))
	good, _ := st.MarshalBinary()
	f.Add(good)
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Stats
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		// Whatever decodes can be used and added to.
		for _, p := range s.paths {
			s.Cochange(p, 3, time.Time{})
			s.Experts(p, time.Time{})
			s.Log(p, 3)
		}
		s.Add(randomHistory(4, 20))
		if _, err := s.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	})
}

// A commit that changed no file (as Read returns them for a
// subdirectory, or an empty commit) is counted and nothing more: no log
// holds it, so it is not kept.
func TestStatsEmptyCommitsNotKept(t *testing.T) {
	st := NewStats(Options{})
	var cs []Commit
	for i := range 100 {
		cs = append(cs, commit(fmt.Sprint(i), alice, day("2020-01-01").Add(time.Duration(i)*time.Hour)))
	}
	st.Add(newestFirst(cs...))
	for _, c := range st.commits {
		if c.hash != "" {
			t.Fatalf("commit %s without files is kept", c.hash)
		}
	}
	if st.Len() != 100 || !st.Newest().Equal(day("2020-01-01").Add(99*time.Hour)) {
		t.Errorf("Len %d, Newest %v", st.Len(), st.Newest())
	}
	if got := decode(t, encode(t, st)); got.Len() != 100 {
		t.Errorf("decoded Len %d", got.Len())
	}
}

// Bounds too large to keep a Stats small (a commit's pairs grow as the
// square of MaxFiles) are cut to the largest allowed, and refused in
// encoded data.
func TestStatsOptionLimits(t *testing.T) {
	huge := Options{HalfLife: time.Hour, MaxFiles: 1 << 30, Partners: 1 << 30, Authors: 1 << 30, LogLen: 1 << 30}
	got := NewStats(huge).Options()
	if got.MaxFiles != MaxMaxFiles || got.Partners != MaxKept || got.Authors != MaxKept || got.LogLen != MaxKept {
		t.Errorf("options %+v, want each cut to its limit", got)
	}
	st := &Stats{opt: huge, ready: true}
	data := encode(t, st)
	var back Stats
	if err := back.UnmarshalBinary(data); err == nil || !strings.Contains(err.Error(), "option") {
		t.Errorf("encoded huge options: %v, want an error", err)
	}
}
