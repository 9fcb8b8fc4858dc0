package index

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

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
)

// queryDates returns the calendar days a query names ("on 3 June, 2023",
// "October 13, 2023", "2023-10-13"), in UTC.
func queryDates(text string) []time.Time {
	var out []time.Time
	add := func(y, m, d string, month time.Month) {
		year, err1 := strconv.Atoi(y)
		day, err2 := strconv.Atoi(d)
		if month == 0 {
			mm, err := strconv.Atoi(m)
			if err != nil {
				return
			}
			month = time.Month(mm)
		}
		if err1 != nil || err2 != nil || month < 1 || month > 12 || day < 1 || day > 31 {
			return
		}
		t := time.Date(year, month, day, 0, 0, 0, 0, time.UTC)
		if t.Day() != day {
			return // 31 June
		}
		out = append(out, t)
	}
	for _, m := range dayMonthYear.FindAllStringSubmatch(text, -1) {
		add(m[3], "", m[1], months[strings.ToLower(m[2])])
	}
	for _, m := range monthDayYear.FindAllStringSubmatch(text, -1) {
		add(m[3], "", m[2], months[strings.ToLower(m[1])])
	}
	for _, m := range isoDate.FindAllStringSubmatch(text, -1) {
		add(m[1], m[2], m[3], 0)
	}
	return out
}

// dateCloseness is 1 for an entry created on one of the days, falling
// linearly to 0 at window days away; 0 without days.
func dateCloseness(created time.Time, days []time.Time, window float64) float64 {
	best := 0.0
	for _, d := range days {
		mid := d.Add(12 * time.Hour)
		off := created.Sub(mid).Hours() / 24
		if off < 0 {
			off = -off
		}
		off = max(0, off-0.5) // the whole day counts as the day
		best = max(best, 1-off/window)
	}
	return best
}
