package index

import (
	"encoding/binary"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// span is a stretch of time a query names: a day, or a month; to is
// exclusive. Times are UTC.
type span struct{ from, to time.Time }

var months = map[string]time.Month{
	"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
	"oct": 10, "nov": 11, "dec": 12,
}

const monthRE = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?`

var (
	dayMonthYear = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+` + monthRE + `,?\s+(\d{4})\b`)
	monthDayYear = regexp.MustCompile(`(?i)\b` + monthRE + `\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b`)
	isoDate      = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	monthYear    = regexp.MustCompile(`(?i)\b` + monthRE + `,?\s+(\d{4})\b`)
)

// querySpans returns the days a query names ("on 3 June, 2023", "October
// 13, 2023", "2023-10-13"), the months it names without a day ("in May
// 2023"), and the times it names relative to now, in now's time zone
// ("today", "yesterday", "3 days ago", "this week", "last week", "2 weeks
// ago", "this month", "last month"; weeks start on Monday).
func querySpans(text string, now time.Time) []span {
	var out []span
	blank := []byte(text) // the text with the days found so far blanked
	addDay := func(y, d int, m time.Month) {
		if y < 1 || m < 1 || m > 12 || d < 1 || d > 31 {
			return
		}
		t := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		if t.Day() != d {
			return // 31 June
		}
		out = append(out, span{t, t.AddDate(0, 0, 1)})
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	each := func(re *regexp.Regexp, f func(m []string)) {
		for _, ix := range re.FindAllStringSubmatchIndex(string(blank), -1) {
			m := make([]string, len(ix)/2)
			for i := range m {
				if ix[2*i] >= 0 {
					m[i] = text[ix[2*i]:ix[2*i+1]]
				}
			}
			f(m)
			for i := ix[0]; i < ix[1]; i++ {
				blank[i] = ' '
			}
		}
	}
	each(dayMonthYear, func(m []string) { addDay(atoi(m[3]), atoi(m[1]), months[strings.ToLower(m[2])]) })
	each(monthDayYear, func(m []string) { addDay(atoi(m[3]), atoi(m[2]), months[strings.ToLower(m[1])]) })
	each(isoDate, func(m []string) { addDay(atoi(m[1]), atoi(m[3]), time.Month(atoi(m[2]))) })
	each(monthYear, func(m []string) {
		if y := atoi(m[2]); y > 0 {
			t := time.Date(y, months[strings.ToLower(m[1])], 1, 0, 0, 0, 0, time.UTC)
			out = append(out, span{t, t.AddDate(0, 1, 0)})
		}
	})
	if now.IsZero() {
		return out
	}
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	day := func(back int) span { d := midnight.AddDate(0, 0, -back); return span{d, d.AddDate(0, 0, 1)} }
	monday := midnight.AddDate(0, 0, -((int(midnight.Weekday()) + 6) % 7))
	week := func(back int) span { d := monday.AddDate(0, 0, -7*back); return span{d, d.AddDate(0, 0, 7)} }
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, now.Location())
	month := func(back int) span { d := first.AddDate(0, -back, 0); return span{d, d.AddDate(0, 1, 0)} }
	each(relative, func(m []string) {
		w := strings.ToLower(m[0])
		switch {
		case w == "today":
			out = append(out, day(0))
		case w == "yesterday":
			out = append(out, day(1))
		case strings.HasSuffix(w, "ago"):
			n := atoi(m[1])
			if n == 0 {
				n = numberWords[strings.ToLower(m[1])]
			}
			if n < 1 || n > 366 {
				return
			}
			if strings.HasPrefix(strings.ToLower(m[2]), "day") {
				out = append(out, day(n))
			} else {
				out = append(out, week(n))
			}
		default: // this/last week/month
			back := 0
			if strings.HasPrefix(w, "last") {
				back = 1
			}
			if strings.HasSuffix(w, "week") {
				out = append(out, week(back))
			} else {
				out = append(out, month(back))
			}
		}
	})
	return out
}

var relative = regexp.MustCompile(`(?i)\b(?:today|yesterday|(\d{1,3}|a|one|two|three|four|five|six|seven|eight|nine|ten)\s+(days?|weeks?)\s+ago|(?:this|last)\s+(?:week|month))\b`)

var numberWords = map[string]int{"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}

// dateCloseness is 1 for a time within one of the spans, falling linearly
// to 0 at window days from the nearest; 0 without spans.
func dateCloseness(created time.Time, spans []span, window float64) float64 {
	best := 0.0
	for _, s := range spans {
		var off time.Duration
		switch {
		case created.Before(s.from):
			off = s.from.Sub(created)
		case !created.Before(s.to):
			off = created.Sub(s.to)
		}
		best = max(best, 1-off.Hours()/24/window)
	}
	return best
}

// Days a memory mentions. "I went to the support group yesterday", told
// on 8 May, is about 7 May; a question that names 7 May should find it as
// it finds what was told on 7 May. So at index time the relative times in
// a memory's own text are resolved against its creation time
// (mentionedSpans) and kept as terms of the lexical index that no word
// analyses to: a day as dayTerm, a month as monthTerm, a week or a
// weekend as its days. A search whose query names times looks them up
// (mentionCloseness) and gives a memory the date bonus for the nearer of
// its creation and the days it mentions. Years are too wide to mean a
// time, as they are for queries; the text of the turn before (Doc.Context)
// is not read, its days being its own.

var weekdays = map[string]time.Weekday{"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6}

// maxMentions bounds the spans read from one memory.
const maxMentions = 32

// mentionedSpans returns the days, weeks, weekends and months text names
// relative to created (weeks start on Monday), in created's time zone:
// "today", "tonight", "this morning" (afternoon, evening), "yesterday",
// "last night", "tomorrow", "the day before yesterday", "the day after
// tomorrow", "N days (weeks, months) ago" (N a number up to 366 or a word
// up to ten, "a", "an"), and "last", "this", "next", "past", "this past"
// or "this coming" before "week", "weekend", "month" or a weekday. The
// text is read as a run of lower-cased ASCII words, once, without a
// regular expression: a rebuild reads every memory.
func mentionedSpans(text string, created time.Time) []span {
	if created.IsZero() {
		return nil
	}
	words := mentionWords(text)
	if words == nil {
		return nil
	}
	midnight := time.Date(created.Year(), created.Month(), created.Day(), 0, 0, 0, 0, created.Location())
	days := func(from, n int) span {
		d := midnight.AddDate(0, 0, from)
		return span{d, d.AddDate(0, 0, n)}
	}
	wd := int(midnight.Weekday())
	monday := (wd + 6) % 7 // days since Monday
	first := time.Date(created.Year(), created.Month(), 1, 0, 0, 0, 0, created.Location())
	month := func(off int) span { d := first.AddDate(0, off, 0); return span{d, d.AddDate(0, 1, 0)} }
	at := func(i int) string {
		if i >= 0 && i < len(words) {
			return words[i]
		}
		return ""
	}
	var out []span
	for i := 0; i < len(words) && len(out) < maxMentions; i++ {
		switch w := words[i]; w {
		case "today", "tonight":
			out = append(out, days(0, 1))
		case "yesterday":
			if at(i-1) == "before" && at(i-2) == "day" {
				out = append(out, days(-2, 1))
			} else {
				out = append(out, days(-1, 1))
			}
		case "tomorrow":
			if at(i-1) == "after" && at(i-2) == "day" {
				out = append(out, days(2, 1))
			} else {
				out = append(out, days(1, 1))
			}
		case "ago":
			n, err := strconv.Atoi(at(i - 2))
			if err != nil {
				n = numberWords[at(i-2)]
				if at(i-2) == "an" {
					n = 1
				}
			}
			if n < 1 || n > 366 {
				continue
			}
			switch strings.TrimSuffix(at(i-1), "s") {
			case "day":
				out = append(out, days(-n, 1))
			case "week":
				out = append(out, days(-monday-7*n, 7))
			case "month":
				out = append(out, month(-n))
			}
		case "last", "this", "next", "past":
			dir := 0 // this
			switch w {
			case "last", "past":
				dir = -1
			case "next":
				dir = 1
			}
			what := at(i + 1)
			if w == "this" && (what == "past" || what == "coming") {
				dir = 1
				if what == "past" {
					dir = -1
				}
				i++
				what = at(i + 1)
			}
			switch what {
			case "morning", "afternoon", "evening":
				if w == "this" {
					out = append(out, days(0, 1))
				}
			case "night":
				if w == "last" {
					out = append(out, days(-1, 1))
				}
			case "week":
				out = append(out, days(-monday+7*dir, 7))
			case "month":
				out = append(out, month(dir))
			case "weekend":
				sat := 5 - monday // this week's Saturday
				switch dir {
				case -1:
					back := (wd - 6 + 7) % 7 // days since the last Saturday
					if back < 2 {
						back += 7 // a weekend not over is not the last
					}
					sat = -back
				case 1:
					if sat <= 0 {
						sat += 7
					}
				}
				out = append(out, days(sat, 2))
			default:
				target, ok := weekdays[what]
				if !ok {
					continue
				}
				var off int
				switch dir {
				case -1:
					off = -((wd - int(target) + 7) % 7)
					if off == 0 {
						off = -7
					}
				case 1:
					off = (int(target) - wd + 7) % 7
					if off == 0 {
						off = 7
					}
				default:
					off = (int(target)+6)%7 - monday // in this week
				}
				out = append(out, days(off, 1))
			}
		}
	}
	return out
}

// mentionWords returns text's ASCII words, lower-cased, when one of them
// can start or end a mention; nil when none can, which is most texts, at
// no allocation.
func mentionWords(text string) []string {
	trigger := false
	eachWord(text, func(w string) bool {
		switch w {
		case "today", "tonight", "yesterday", "tomorrow", "ago", "last", "this", "next", "past":
			trigger = true
			return false
		}
		return true
	})
	if !trigger {
		return nil
	}
	// The words are copied into one buffer of their exact size, the list
	// made at its length: copied one by one into a growing list, they had
	// been a sixth of what a rebuild allocated.
	n, size := 0, 0
	eachWord(text, func(w string) bool { n, size = n+1, size+len(w); return true })
	words := make([]string, 0, n)
	buf := make([]byte, 0, size)
	eachWord(text, func(w string) bool {
		at := len(buf)
		buf = append(buf, w...)
		words = append(words, unsafe.String(unsafe.SliceData(buf[at:]), len(w)))
		return true
	})
	return words
}

// eachWord calls fn with each run of ASCII letters and digits of text,
// lower-cased in a buffer of up to 16 bytes (longer words are passed
// cut, which no mention word is), until fn returns false. The word is
// only valid during the call.
func eachWord(text string, fn func(string) bool) {
	var buf [16]byte
	for i := 0; i < len(text); {
		c := text[i]
		if !isWordByte(c) {
			i++
			continue
		}
		n := 0
		for ; i < len(text) && isWordByte(text[i]); i++ {
			if n < len(buf) {
				buf[n] = text[i] | 0x20*byte(b2i('A' <= text[i] && text[i] <= 'Z'))
				n++
			}
		}
		// The word lives in buf: fn must copy what it keeps.
		if n > 0 && !fn(unsafe.String(&buf[0], n)) {
			return
		}
	}
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// dayTerm and monthTerm are the lexical terms of a mentioned day and
// month. Their first byte is one no analysed word has.
func dayTerm(t time.Time) string   { return "\x00d" + t.Format("20060102") }
func monthTerm(t time.Time) string { return "\x00m" + t.Format("200601") }

// mentionTerms returns the terms of the spans a memory mentions: a month
// as itself, shorter spans as their days.
func mentionTerms(spans []span) []string {
	var out []string
	for _, s := range spans {
		if s.to.Sub(s.from) > 8*24*time.Hour {
			out = append(out, monthTerm(s.from))
			continue
		}
		for d := s.from; d.Before(s.to); d = d.AddDate(0, 0, 1) {
			out = append(out, dayTerm(d))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// addMentions adds to terms (encoded as analyse encodes them) the terms
// of the days text mentions relative to created, once each; they do not
// count in the text's length.
func addMentions(terms []byte, text string, created time.Time) []byte {
	extra := mentionTerms(mentionedSpans(text, created))
	if len(extra) == 0 {
		return terms
	}
	tf := make([]termFreq, len(extra))
	for i, t := range extra {
		tf[i] = termFreq{t, 1}
	}
	return mergeTerms(terms, tf)
}

// mergeTerms adds terms of its own to terms encoded as analyse encodes
// them; none of extra may be among them.
func mergeTerms(terms []byte, extra []termFreq) []byte {
	all := slices.Clone(extra)
	eachTerm(terms, func(term string, freq uint32) { all = append(all, termFreq{strings.Clone(term), freq}) })
	slices.SortFunc(all, func(a, b termFreq) int { return strings.Compare(a.term, b.term) })
	b := binary.AppendUvarint(nil, uint64(len(all)))
	for _, t := range all {
		b = binary.AppendUvarint(b, uint64(len(t.term)))
		b = append(b, t.term...)
		b = binary.AppendUvarint(b, uint64(t.freq))
	}
	return b
}

// mentionCloseness returns, by row of vs, how close the days the row's
// memory mentions come to the spans: 1 within one, falling to 0 at
// window days from the nearest (as dateCloseness measures its creation).
// Rows that mention no day near them are left out.
func (vs *vecStore) mentionCloseness(spans []span, window float64) map[int]float64 {
	if len(spans) == 0 || window <= 0 {
		return nil
	}
	var out map[int]float64
	note := func(term string, c float64) {
		if c <= 0 {
			return
		}
		vs.eachPosting(term, func(row int, _ uint32) {
			if out == nil {
				out = map[int]float64{}
			}
			out[row] = max(out[row], c)
		})
	}
	win := time.Duration(window * float64(24*time.Hour))
	seenDay, seenMonth := map[string]bool{}, map[string]bool{}
	for _, s := range spans {
		from, to := s.from.Add(-win), s.to.Add(win)
		if to.Sub(from) > 400*24*time.Hour {
			continue
		}
		for d := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC); d.Before(to); d = d.AddDate(0, 0, 1) {
			if t := dayTerm(d); !seenDay[t] {
				seenDay[t] = true
				note(t, dateCloseness(d.Add(12*time.Hour), spans, window))
			}
		}
		for m := time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC); m.Before(to); m = m.AddDate(0, 1, 0) {
			if t := monthTerm(m); !seenMonth[t] {
				seenMonth[t] = true
				note(t, spanCloseness(span{m, m.AddDate(0, 1, 0)}, spans, window))
			}
		}
	}
	return out
}

// spanCloseness is dateCloseness for a stretch of time: 1 when it meets
// one of the spans, falling to 0 at window days from the nearest.
func spanCloseness(m span, spans []span, window float64) float64 {
	best := 0.0
	for _, s := range spans {
		var off time.Duration
		switch {
		case !m.to.After(s.from):
			off = s.from.Sub(m.to)
		case !s.to.After(m.from):
			off = m.from.Sub(s.to)
		}
		best = max(best, 1-off.Hours()/24/window)
	}
	return best
}
