package index

import (
	"strings"
	"testing"
	"time"
)

func TestMentionedSpans(t *testing.T) {
	created := time.Date(2023, 5, 9, 14, 0, 0, 0, time.UTC) // a Tuesday
	d := func(m time.Month, day int) time.Time { return time.Date(2023, m, day, 0, 0, 0, 0, time.UTC) }
	for text, want := range map[string][]span{
		"I went to the support group yesterday": {{d(5, 8), d(5, 9)}},
		"we met last night":                     {{d(5, 8), d(5, 9)}},
		"this morning I ran":                    {{d(5, 9), d(5, 10)}},
		"Today was long":                        {{d(5, 9), d(5, 10)}},
		"see you tomorrow":                      {{d(5, 10), d(5, 11)}},
		"the day before yesterday":              {{d(5, 7), d(5, 8)}},
		"two days ago":                          {{d(5, 7), d(5, 8)}},
		"3 days ago":                            {{d(5, 6), d(5, 7)}},
		"last week was busy":                    {{d(5, 1), d(5, 8)}},
		"this week":                             {{d(5, 8), d(5, 15)}},
		"next week":                             {{d(5, 15), d(5, 22)}},
		"a week ago":                            {{d(5, 1), d(5, 8)}},
		"two weeks ago":                         {{d(4, 24), d(5, 1)}},
		"last Saturday":                         {{d(5, 6), d(5, 7)}},
		"last Tuesday":                          {{d(5, 2), d(5, 3)}},
		"this past Monday":                      {{d(5, 8), d(5, 9)}},
		"next Friday":                           {{d(5, 12), d(5, 13)}},
		"next Tuesday":                          {{d(5, 16), d(5, 17)}},
		"this Friday":                           {{d(5, 12), d(5, 13)}},
		"last weekend":                          {{d(5, 6), d(5, 8)}},
		"this weekend":                          {{d(5, 13), d(5, 15)}},
		"last month":                            {{d(4, 1), d(5, 1)}},
		"next month":                            {{d(6, 1), d(7, 1)}},
		"a month ago":                           {{d(4, 1), d(5, 1)}},
		"yesterday, and again last Saturday":    {{d(5, 8), d(5, 9)}, {d(5, 6), d(5, 7)}},
		"our weekly sync":                       nil,
		"a few days ago":                        nil,
		"on Monday":                             nil,
		"last year":                             nil,
		"the holidays":                          nil,
		"Yesterdays and todays are words too, …": nil,
	} {
		got := mentionedSpans(text, created)
		if len(got) != len(want) {
			t.Errorf("%q: %v, want %v", text, got, want)
			continue
		}
		for i := range got {
			if !got[i].from.Equal(want[i].from) || !got[i].to.Equal(want[i].to) {
				t.Errorf("%q: %v, want %v", text, got, want)
			}
		}
	}
	// A Saturday's "last weekend" is the one before, and a Sunday's too.
	sat := time.Date(2023, 5, 13, 9, 0, 0, 0, time.UTC)
	if got := mentionedSpans("last weekend", sat); len(got) != 1 || !got[0].from.Equal(d(5, 6)) {
		t.Errorf("last weekend on a Saturday: %v, want from 6 May", got)
	}
	if got := mentionedSpans("last weekend", sat.AddDate(0, 0, 1)); len(got) != 1 || !got[0].from.Equal(d(5, 6)) {
		t.Errorf("last weekend on a Sunday: %v, want from 6 May", got)
	}
	if got := mentionedSpans("yesterday", time.Time{}); got != nil {
		t.Errorf("without a creation time: %v, want none", got)
	}
}

// TestMentionedDayFound: a memory that mentions a day relative to its
// creation gets the date bonus for a question that names that day, and
// the terms of the days it mentions are none of a query's.
func TestMentionedDayFound(t *testing.T) {
	f := newFake(t)
	june := func(day int) time.Time { return time.Date(2023, 6, day, 12, 0, 0, 0, time.UTC) }
	a := f.writeDoc(t, fdoc{id: "A", created: june(20), text: "Two weeks ago we went to the pottery class"})
	b := f.writeDoc(t, fdoc{id: "B", created: june(27), text: "We went to the pottery class again"})
	ix := mustOpen(t, f, opts(nil))
	for _, mode := range []string{ModeLexical, ModeHybrid} {
		hits, err := ix.Search(Query{Text: "pottery class on 7 June 2023", Mode: mode, Now: june(30)})
		if err != nil || len(hits) != 2 {
			t.Fatalf("%s: %+v, %v; want both", mode, hits, err)
		}
		for _, h := range hits {
			if want := map[string]float64{a: DefaultRanking.DateBonus, b: 0}[h.Path]; h.Why.Date != want {
				t.Errorf("%s: %s has date bonus %v, want %v", mode, h.ID, h.Why.Date, want)
			}
		}
		// By words alone the two match alike, and the day decides.
		if mode == ModeLexical && hits[0].Path != a {
			t.Errorf("%s: %+v; want %s first", mode, hits, a)
		}
		hits, err = ix.Search(Query{Text: "pottery class", Mode: mode, Now: june(30)})
		if err != nil || len(hits) != 2 || hits[0].Path != b {
			t.Errorf("%s, no date: %+v, %v; want %s first", mode, hits, err, b)
		}
	}
	for _, q := range []string{"20230607", "d20230607", "\x00d20230607"} {
		terms, _ := textTerms(q)
		for _, term := range terms {
			if strings.HasPrefix(term, "\x00") {
				t.Errorf("query %q has the term %q", q, term)
			}
		}
	}
}
