package index

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestTimeRange checks the time filters against the entries' times one
// by one, around the edges of the spans timeRange splits a range into:
// every pair of bounds from times just before, at and after each entry.
func TestTimeRange(t *testing.T) {
	f := newFake(t)
	span := time.Duration(1) << (64 - 4*spans[len(spans)-1].digits)
	long := time.Duration(1) << 52                       // 52 days
	huge := int64(1) << 56                               // 2.3 years
	b := time.Unix(0, 100000*int64(span)).UTC()          // a span starts here
	lb := time.Unix(0, (b.UnixNano()/huge+1)*huge).UTC() // every span starts here
	times := []time.Time{
		b.Add(-time.Nanosecond), b, b.Add(time.Nanosecond), b.Add(time.Hour),
		b.Add(span - 1), b.Add(span), b.Add(2*span + 7), b.Add(-3 * span),
		b.Add(40 * 24 * time.Hour), b.Add(-40 * 24 * time.Hour),
		time.Date(1950, 3, 1, 12, 0, 0, 0, time.UTC), // before 1970: a negative time
		b.Add(long - 1), b.Add(long), b.Add(long + span + 3), b.Add(-long + 5),
		b.Add(5 * long), b.Add(-7*long - span), b.Add(40 * long), b.Add(-60 * long),
		lb.Add(-time.Nanosecond), lb, lb.Add(time.Nanosecond), lb.Add(span), lb.Add(long + 1),
	}
	for i, c := range times {
		f.writeDoc(t, fdoc{id: fmt.Sprintf("E%02d", i), created: c, text: fmt.Sprintf("alpha entry %d", i)})
	}
	ix := mustOpen(t, f, opts(nil))
	probes := []time.Time{{}}
	for _, c := range times {
		probes = append(probes, c.Add(-time.Nanosecond), c, c.Add(time.Nanosecond))
	}
	probes = append(probes, b.Add(-span+1), b.Add(span/2), time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC))
	checked := 0
	for _, since := range probes {
		for _, until := range probes {
			if since.IsZero() && until.IsZero() {
				continue
			}
			var want []string
			for i, c := range times {
				if (since.IsZero() || !c.Before(since)) && (until.IsZero() || c.Before(until)) {
					want = append(want, fmt.Sprintf("E%02d", i))
				}
			}
			for _, text := range []string{"", "alpha"} {
				hits, err := ix.Search(Query{Text: text, Since: since, until: until, K: 50, Mode: ModeLexical})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, h := range hits {
					got = append(got, h.ID)
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Fatalf("text %q from %v to %v: got %v, want %v", text, since, until, got, want)
				}
				checked++
			}
		}
	}
	t.Logf("%d searches checked", checked)
}

// TestTimeKeyOrder checks that time keys sort as their times do, across
// zero and up to the ends of what they can hold.
func TestTimeKeyOrder(t *testing.T) {
	ts := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), minKeyTime, minKeyTime.Add(1),
		time.Unix(0, -1), time.Unix(0, 0), time.Unix(0, 1), time.Unix(1700000000, 5),
		maxKeyTime.Add(-1), maxKeyTime, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for i := 1; i < len(ts); i++ {
		a, b := timeKey(ts[i-1]), timeKey(ts[i])
		if len(a) != 16 || len(b) != 16 {
			t.Fatalf("keys %q, %q: want 16 digits", a, b)
		}
		clamped := i == 1 || i == len(ts)-1
		if a > b || a == b && !clamped {
			t.Errorf("%v → %s is not before %v → %s", ts[i-1], a, ts[i], b)
		}
	}
}

// BenchmarkLongTimeRange searches a store of 10,000 entries made over ten
// years with filters of a year and of nine: a range covers its whole
// spans with few terms however long it is.
func BenchmarkLongTimeRange(b *testing.B) {
	f := newFake(b)
	end := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	step := 10 * 365 * 24 * time.Hour / 10000
	for i := range 10000 {
		f.writeDoc(b, fdoc{id: fmt.Sprintf("L%05d", i), created: end.Add(-time.Duration(i)*step - 17*time.Second),
			text: fmt.Sprintf("entry %d of the long store, about %s", i, vocabulary[i%len(vocabulary)])})
	}
	ix, err := Open(f, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	for _, years := range []int{1, 9} {
		q := Query{Text: "long store " + vocabulary[7], Since: end.Add(-time.Duration(years) * 365 * 24 * time.Hour), Mode: ModeLexical}
		b.Run(fmt.Sprintf("%dy", years), func(b *testing.B) {
			for b.Loop() {
				if _, err := ix.Search(q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
