package index

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func ymd(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

func dayOf(y int, m time.Month, d int) span { return span{ymd(y, m, d), ymd(y, m, d+1)} }

func monthOf(y int, m time.Month) span { return span{ymd(y, m, 1), ymd(y, m+1, 1)} }

func TestQuerySpans(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []span
	}{
		{"What did Maria start on 3 June, 2023?", []span{dayOf(2023, 6, 3)}},
		{"What painting did Melanie show on October 13, 2023?", []span{dayOf(2023, 10, 13)}},
		{"the 13th of October 2023", []span{dayOf(2023, 10, 13)}},
		{"Sept. 5, 2024 and 2026-03-02", []span{dayOf(2024, 9, 5), dayOf(2026, 3, 2)}},
		{"between 1 Feb 2023 and 2 feb 2023", []span{dayOf(2023, 2, 1), dayOf(2023, 2, 2)}},
		{"on 31 December, 2023", []span{dayOf(2023, 12, 31)}},
		{"31 June, 2023", nil}, // no such day, and not a month either
		{"What did John host in May 2023?", []span{monthOf(2023, 5)}},
		{"as of December, 2023", []span{monthOf(2023, 12)}},
		{"on 3 June, 2023, not in July 2023", []span{dayOf(2023, 6, 3), monthOf(2023, 7)}},
		{"version 3 may 2023", []span{dayOf(2023, 5, 3)}}, // "may" is a month here
		{"it may 12 times", nil},
		{"in 2023", nil}, // a year is too wide to favour
		{"uuid 2023-13-01", nil},
		{"", nil},
	} {
		if got := querySpans(tc.text, time.Time{}); !slices.Equal(got, tc.want) {
			t.Errorf("querySpans(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestQuerySpansRelative(t *testing.T) {
	zone := time.FixedZone("UTC+2", 2*3600)
	now := time.Date(2026, 11, 18, 15, 4, 0, 0, zone) // a Wednesday
	at := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, zone) }
	sp := func(m time.Month, d, days int) span { return span{at(m, d), at(m, d).AddDate(0, 0, days)} }
	for _, tc := range []struct {
		text string
		want []span
	}{
		{"what did we decide today", []span{sp(11, 18, 1)}},
		{"Yesterday's deploy", []span{sp(11, 17, 1)}},
		{"the fix from 3 days ago", []span{sp(11, 15, 1)}},
		{"a day ago", []span{sp(11, 17, 1)}},
		{"two weeks ago", []span{sp(11, 2, 7)}},
		{"this week", []span{sp(11, 16, 7)}},
		{"last week's outage", []span{sp(11, 9, 7)}},
		{"last month", []span{{at(10, 1), at(11, 1)}}},
		{"this month", []span{{at(11, 1), at(12, 1)}}},
		{"last weekend before April 10, 2023", []span{dayOf(2023, 4, 10)}}, // a weekend is not a week
		{"the daily standup", nil},
		{"400 days ago", nil},
	} {
		if got := querySpans(tc.text, now); !slices.EqualFunc(got, tc.want, func(a, b span) bool { return a.from.Equal(b.from) && a.to.Equal(b.to) }) {
			t.Errorf("querySpans(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	// On a Monday, this week starts today; on a Sunday, six days ago.
	if got := querySpans("this week", time.Date(2026, 11, 16, 9, 0, 0, 0, zone)); len(got) != 1 || !got[0].from.Equal(at(11, 16)) {
		t.Errorf("this week on a Monday: %v", got)
	}
	if got := querySpans("this week", time.Date(2026, 11, 22, 9, 0, 0, 0, zone)); len(got) != 1 || !got[0].from.Equal(at(11, 16)) {
		t.Errorf("this week on a Sunday: %v", got)
	}
}

func TestDateCloseness(t *testing.T) {
	days := []span{dayOf(2023, 6, 3)}
	for _, tc := range []struct {
		created time.Time
		spans   []span
		want    float64
	}{
		{ymd(2023, 6, 3).Add(23 * time.Hour), days, 1},
		{ymd(2023, 6, 3), days, 1},
		{ymd(2023, 6, 6).Add(12 * time.Hour), days, 1 - 2.5/7},  // three days later
		{ymd(2023, 5, 31).Add(12 * time.Hour), days, 1 - 2.5/7}, // three days before
		{ymd(2023, 6, 11), days, 0},
		{ymd(2022, 6, 3), days, 0},
		{ymd(2023, 5, 20), []span{monthOf(2023, 5)}, 1},
		{ymd(2023, 6, 1).Add(84 * time.Hour), []span{monthOf(2023, 5)}, 0.5},
		{ymd(2023, 6, 3), nil, 0},
	} {
		if got := dateCloseness(tc.created, tc.spans, 7); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("dateCloseness(%v, %v) = %v, want %v", tc.created, tc.spans, got, tc.want)
		}
	}
}

// TestDateBonus: a query that names a day lifts the entries of that day,
// and makes candidates of those that match its words too weakly to be
// among the best BM25 matches otherwise.
func TestDateBonus(t *testing.T) {
	f := newFake(t)
	on := time.Date(2023, 6, 3, 15, 0, 0, 0, time.UTC)
	// Two entries alike but for their day.
	f.writeDoc(t, fdoc{id: "MAY", created: time.Date(2023, 5, 1, 15, 0, 0, 0, time.UTC), text: "We painted the boat red"})
	f.writeDoc(t, fdoc{id: "JUNE", created: on, text: "We painted the boat blue"})
	// Forty better matches of other days, and one weak match of the day.
	for i := range 40 {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("B%02d", i), created: time.Date(2023, 1, 1+i%28, 0, 0, 0, 0, time.UTC),
			text: fmt.Sprintf("boat boat painted boat number %d", i)})
	}
	f.writeDoc(t, fdoc{id: "WEAK", created: on.Add(-time.Hour), text: "a long note about the harbour, the weather, the crew, the sails and, at the very end, a boat " + strings.Repeat("and more words ", 10)})
	ix := mustOpen(t, f, opts(nil))
	defer ix.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	find := func(hits []Hit, id string) (int, Hit) {
		for i, h := range hits {
			if h.ID == id {
				return i, h
			}
		}
		return -1, Hit{}
	}
	for _, mode := range []string{ModeLexical, ModeHybrid} {
		st, err := ix.SearchStages(Query{Text: "boat painted on 3 June, 2023", K: 1, Mode: mode, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		iJune, june := find(st.Ranked, "JUNE")
		iMay, _ := find(st.Ranked, "MAY")
		if iJune < 0 || iMay >= 0 && iMay < iJune || june.Why.Date != DefaultRanking.DateBonus {
			t.Errorf("%s: JUNE at %d (why %+v), MAY at %d: want JUNE first with the full bonus", mode, iJune, june.Why, iMay)
		}
		if i, h := find(st.Ranked, "WEAK"); i < 0 || h.Why.Date <= 0 {
			t.Errorf("%s: the weak match of the day is not a candidate with a bonus (%d)", mode, i)
		}
		// Without the day: no bonus, and the weak match is no candidate.
		st, err = ix.SearchStages(Query{Text: "boat painted", K: 1, Mode: mode, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if i, _ := find(st.Ranked, "WEAK"); i >= 0 {
			t.Errorf("%s: the weak match is a candidate without the day", mode)
		}
		for _, h := range st.Ranked {
			if h.Why.Date != 0 {
				t.Errorf("%s: date bonus %v without a day in the query", mode, h.Why.Date)
			}
		}
		// "Yesterday", asked the day after.
		st, err = ix.SearchStages(Query{Text: "boat painted yesterday", K: 1, Mode: mode, Now: on.Add(20 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if i, h := find(st.Ranked, "JUNE"); i != 0 || h.Why.Date != DefaultRanking.DateBonus {
			t.Errorf("%s: yesterday: JUNE at %d (why %+v), want first with the full bonus", mode, i, h.Why)
		}
	}
}

// TestUntil: the upper bound of a window filters both retrievers alike.
func TestUntil(t *testing.T) {
	f := newFake(t)
	for d := 1; d <= 9; d++ {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("D%d", d), created: time.Date(2023, 6, d, 12, 0, 0, 0, time.UTC), text: "boat trip notes"})
	}
	ix := mustOpen(t, f, opts(nil))
	defer ix.Close()
	for _, mode := range []string{ModeLexical, ModeVector} {
		q := Query{Text: "boat trip", K: 20, Mode: mode, Now: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
			Since: time.Date(2023, 6, 3, 0, 0, 0, 0, time.UTC), until: time.Date(2023, 6, 6, 0, 0, 0, 0, time.UTC)}
		st, err := ix.SearchStages(q)
		if err != nil {
			t.Fatal(err)
		}
		got := ids(st.Final)
		slices.Sort(got)
		if want := []string{"D3", "D4", "D5"}; !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", mode, got, want)
		}
	}
}

// TestMentionWords: a text with a relative date word gives all its words,
// lower-cased and cut to 16 bytes, each kept apart from the next text's;
// one without gives none.
func TestMentionWords(t *testing.T) {
	if got := mentionWords("We met on the Tuesday after the release"); got != nil {
		t.Errorf("no date word: %q, want none", got)
	}
	a := mentionWords("Met Ana LAST week, 2 days ago; internationalization-wise fine")
	b := mentionWords("next Friday")
	want := []string{"met", "ana", "last", "week", "2", "days", "ago", "internationaliza", "wise", "fine"}
	if !slices.Equal(a, want) {
		t.Errorf("got %q, want %q", a, want)
	}
	if !slices.Equal(b, []string{"next", "friday"}) {
		t.Errorf("got %q", b)
	}
}
