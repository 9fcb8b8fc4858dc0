package summarize

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
)

// unit is one piece of text to summarize: a turn, a fact, or a line of an
// earlier summary. label ("user", "fact", ...) is kept in the output so a
// reader knows who said what.
type unit struct {
	label string
	text  string
	at    string // when it was said, for a model's benefit; may be empty
}

// sentence is a candidate for an extractive summary.
type sentence struct {
	unit, pos int    // index of its unit, position within the unit
	text      string // as written
	vec       []termWeight
	words     int // content words
	score     float64
	cost      int // tokens
}

type termWeight struct {
	term int
	w    float64
}

// extract picks the sentences that best represent units within target
// tokens, and returns them in their original order, one line per unit
// they come from. Sentences are scored by TF-IDF centrality (cosine with
// the centroid of all sentences), with a bonus for the first sentence of a
// unit and for recency, and near-repeats of a chosen sentence are skipped.
// The result is deterministic: ties go to the earlier sentence.
func extract(units []unit, target int, count func(string) int) string {
	sents := splitUnits(units)
	if len(sents) == 0 {
		return ""
	}
	weigh(sents, len(units))
	for i := range sents {
		sents[i].cost = count(sents[i].text) + 1
	}
	order := make([]int, len(sents))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(sents[b].score, sents[a].score), cmp.Compare(a, b))
	})
	var chosen []int
	used := 0
	for _, i := range order {
		s := &sents[i]
		if len(chosen) > 0 && (used+s.cost > target || s.words < 2) {
			continue // over budget, or filler ("No, not yet.") that only fills it
		}
		if redundant(s, sents, chosen) {
			continue
		}
		chosen = append(chosen, i)
		used += s.cost
	}
	// The estimate above adds sentence costs; the real text also has
	// labels and line breaks. Drop the weakest choices until it fits.
	for {
		out := render(units, sents, chosen)
		if count(out) <= target || len(chosen) <= 1 {
			if count(out) > target && len(chosen) == 1 {
				return clip(out, target, count)
			}
			return out
		}
		chosen = chosen[:len(chosen)-1]
	}
}

// redundant reports whether s nearly repeats a chosen sentence.
func redundant(s *sentence, sents []sentence, chosen []int) bool {
	if len(s.vec) == 0 {
		return false
	}
	for _, j := range chosen {
		if cosine(s.vec, sents[j].vec) > 0.85 {
			return true
		}
	}
	return false
}

// render writes the chosen sentences in document order, one "- label: …"
// line per unit.
func render(units []unit, sents []sentence, chosen []int) string {
	idx := slices.Clone(chosen)
	slices.Sort(idx)
	var b strings.Builder
	last := -1
	for _, i := range idx {
		s := sents[i]
		if s.unit != last {
			if last >= 0 {
				b.WriteByte('\n')
			}
			b.WriteString("- ")
			if l := units[s.unit].label; l != "" {
				b.WriteString(l + ": ")
			}
			last = s.unit
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(s.text)
	}
	return b.String()
}

// clip shortens a one-line text to at most target tokens at a word
// boundary, marking the cut.
func clip(s string, target int, count func(string) int) string {
	words := strings.Fields(s)
	lo, hi := 1, len(words)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if count(strings.Join(words[:mid], " ")+" …") <= target {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return strings.Join(words[:lo], " ") + " …"
}

// splitUnits cuts each unit into sentences: at line breaks, and after
// '.', '!' or '?' followed by a space.
func splitUnits(units []unit) []sentence {
	var out []sentence
	for ui, u := range units {
		pos := 0
		for _, line := range strings.Split(u.text, "\n") {
			line = strings.TrimSpace(line)
			line = strings.TrimSpace(strings.TrimLeft(line, "-*•"))
			if line == "" || strings.HasPrefix(line, "```") {
				continue
			}
			for _, s := range splitSentences(line) {
				out = append(out, sentence{unit: ui, pos: pos, text: s})
				pos++
			}
		}
	}
	return out
}

func splitSentences(line string) []string {
	var out []string
	start := 0
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		if rs[i] != '.' && rs[i] != '!' && rs[i] != '?' {
			continue
		}
		if i+1 < len(rs) && !unicode.IsSpace(rs[i+1]) {
			continue // 3.14, e.g.x, file.go
		}
		if s := strings.TrimSpace(string(rs[start : i+1])); s != "" {
			out = append(out, s)
		}
		start = i + 1
	}
	if s := strings.TrimSpace(string(rs[start:])); s != "" {
		out = append(out, s)
	}
	return out
}

// weigh fills each sentence's TF-IDF vector, cost and score.
func weigh(sents []sentence, nUnits int) {
	vocab := map[string]int{}
	df := []int{}
	tfs := make([]map[int]int, len(sents))
	for i := range sents {
		tf := map[int]int{}
		for _, w := range words(sents[i].text) {
			id, ok := vocab[w]
			if !ok {
				id = len(df)
				vocab[w] = id
				df = append(df, 0)
			}
			if tf[id] == 0 {
				df[id]++
			}
			tf[id]++
			sents[i].words++
		}
		tfs[i] = tf
	}
	n := float64(len(sents))
	centroid := make([]float64, len(df))
	for i, tf := range tfs {
		vec := make([]termWeight, 0, len(tf))
		for id, c := range tf {
			idf := math.Log(1 + n/float64(df[id]))
			vec = append(vec, termWeight{id, (1 + math.Log(float64(c))) * idf})
		}
		slices.SortFunc(vec, func(a, b termWeight) int { return cmp.Compare(a.term, b.term) })
		norm := 0.0
		for _, tw := range vec {
			norm += tw.w * tw.w
		}
		norm = math.Sqrt(norm)
		for j := range vec {
			vec[j].w /= norm
			centroid[vec[j].term] += vec[j].w
		}
		sents[i].vec = vec
	}
	cnorm := 0.0
	for _, w := range centroid {
		cnorm += w * w
	}
	cnorm = math.Sqrt(cnorm)
	maxIDF := math.Log(1 + n)
	for i := range sents {
		s := &sents[i]
		central := 0.0
		if cnorm > 0 {
			for _, tw := range s.vec {
				central += tw.w * centroid[tw.term]
			}
			central /= cnorm
		}
		// Centrality alone favours the words everyone repeats ("great",
		// a name); a summary needs what is specific, so it is blended with
		// the mean rarity (IDF) of the sentence's words.
		info := 0.0
		for id := range tfs[i] {
			info += math.Log(1 + n/float64(df[id]))
		}
		if len(tfs[i]) > 0 && maxIDF > 0 {
			info /= float64(len(tfs[i])) * maxIDF
		}
		score := 0.4*central + 0.6*info
		if s.pos == 0 {
			score += 0.1 // a turn's first sentence usually says what it is about
		}
		if nUnits > 1 {
			score += 0.1 * float64(s.unit) / float64(nUnits-1) // newer material matters more to a rolling summary
		}
		// Short sentences say little, yet "Wow, Mel!" shares the most common
		// words of a conversation and would win on centrality alone: weigh
		// by how much a sentence says (0.28 at 2 content words, 0.63 at 6,
		// 0.86 at 12).
		score *= 1 - math.Exp(-float64(s.words)/6)
		s.score = score
	}
}

func cosine(a, b []termWeight) float64 {
	dot := 0.0
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i].term == b[j].term:
			dot += a[i].w * b[j].w
			i++
			j++
		case a[i].term < b[j].term:
			i++
		default:
			j++
		}
	}
	return dot
}

// words returns the lower-cased content words of s: runs of letters and
// digits, two characters or more, that are not stop words.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len(w) < 2 || stop[w] {
			continue
		}
		out = append(out, w)
	}
	return out
}

var stop = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just let me more most my
myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such
than that the their theirs them themselves then there these they this those through to too under until up very
was we were what when where which while who whom why will with would you your yours yourself yourselves ok okay
yes yeah sure thanks thank please also get got like one yet`) {
		m[w] = true
	}
	return m
}()
