package index

import (
	"regexp"
	"strconv"
	"strings"
	"time"
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
