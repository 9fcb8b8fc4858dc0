package index

import (
	"testing"
)

func TestReadIntent(t *testing.T) {
	const (
		d = intentDecision
		p = intentPreference
	)
	for q, want := range map[string]intent{
		"which database did we pick":                            d,
		"what did we decide about caching":                      d,
		"Which queue did we go with?":                           d,
		"what did we agree on for the release train":            d,
		"which framework are we using for the UI":               d,
		"what did we land on for auth":                          d,
		"do I prefer tabs or spaces":                            p,
		"what's my favourite editor":                            p,
		"what is my favorite editor":                            p,
		"how does she like her coffee":                          p,
		"what kind of tea would I rather have":                  p,
		"which shell do I like best":                            p,
		"my preferred style of code review":                     p,
		"what are the user's preferences for naming":            p,
		"which of the two did we choose, and which do I prefer": d | p,
		"where does the staging database run":                   0,
		"What did Caroline say about her job?":                  0,
		"let's go to the beach with the dog":                    0,
		"libraries like React":                                  0,
		"when is the meeting with Dana":                         0,
		"":                                                      0,
	} {
		if got := readIntent(q); got != want {
			t.Errorf("readIntent(%q) = %b, want %b", q, got, want)
		}
	}
}

// intentStore is a mixed store of an agent's memories: decisions and
// preferences, and newer facts, notes, turns and tasks that share their
// words.
var intentStore = []struct {
	id, kind string
	days     int // age
	text     string
}{
	{"D1", "decision", 30, "We chose PostgreSQL over MySQL for the orders service because of JSONB."},
	{"D2", "decision", 12, "Going with Tailwind for styling the admin dashboard; no more hand-written CSS."},
	{"D3", "decision", 40, "Settled on weekly releases every Tuesday instead of continuous deploys."},
	{"D4", "decision", 25, "Auth will use OAuth with Google and GitHub only; no password logins."},
	{"D5", "decision", 20, "Logs go to Loki, retained for 14 days."},
	{"D6", "decision", 60, "The mobile app stays on React Native; the Flutter rewrite was rejected."},
	{"P1", "preference", 50, "Prefers tabs for indentation in Go and spaces in YAML."},
	{"P2", "preference", 45, "Likes short commit messages in the imperative mood."},
	{"P3", "preference", 35, "Wants code reviews to focus on design rather than style nits."},
	{"P4", "preference", 90, "Coffee: flat white, oat milk, no sugar."},
	{"P5", "preference", 70, "Favourite editor is Neovim with the LazyVim setup."},
	{"P6", "preference", 80, "Dark theme everywhere; light themes hurt the user's eyes."},
	{"F1", "fact", 2, "The orders service database runs PostgreSQL 16 on db-3, with MySQL replicas for reports."},
	{"F2", "note", 1, "The Tailwind upgrade to v4 broke the admin dashboard styling; the CSS purge config needs fixing."},
	{"F3", "fact", 3, "Releases are tagged in git as vX.Y.Z; the release notes live in CHANGELOG.md."},
	{"F4", "note", 2, "The OAuth callback URL for GitHub is https://app.example.com/auth/callback."},
	{"F5", "fact", 4, "Loki runs in the monitoring namespace; Grafana reads the logs from it."},
	{"F6", "turn", 1, "user: the React Native build for iOS fails on the CI runner again"},
	{"F7", "note", 5, "gofmt uses tabs for indentation; YAML files must use spaces."},
	{"F8", "fact", 3, "Commit messages must reference the ticket number, per the CI check."},
	{"F9", "note", 6, "Code review checklist: tests, docs, changelog entry."},
	{"F10", "turn", 1, "user: grabbing a coffee, back in ten minutes"},
	{"F11", "note", 2, "The Neovim config lives in ~/.config/nvim; plugins are managed by lazy.nvim."},
	{"F12", "fact", 7, "The dashboard ships a light theme and a dark theme, toggled in settings."},
	{"F13", "fact", 10, "The staging cluster runs on Hetzner in Falkenstein."},
	{"F14", "fact", 8, "Backups of the orders database run nightly at 02:00 UTC to S3."},
	{"F15", "task", 4, "Renew the TLS certificate for api.example.com before 3 December."},
	{"F16", "note", 2, "The meeting with Dana moved to Thursday 3pm."},
}

// intentQuestions are questions an agent asks of intentStore, with the
// memory that answers each: twenty about decisions and preferences, ten
// about other things.
var intentQuestions = []struct{ q, want string }{
	{"which database did we pick for the orders service", "D1"},
	{"what did we decide about styling the admin dashboard", "D2"},
	{"how often do we release, what did we settle on", "D3"},
	{"what did we agree on for login and auth", "D4"},
	{"where do logs go, what was decided", "D5"},
	{"did we decide to rewrite the mobile app in Flutter", "D6"},
	{"which CSS framework are we using for the dashboard", "D2"},
	{"why did we choose postgres", "D1"},
	{"what is our release cadence decision", "D3"},
	{"which login providers did we go with", "D4"},
	{"do I prefer tabs or spaces", "P1"},
	{"how do I like my commit messages", "P2"},
	{"what do I want from code reviews", "P3"},
	{"how does the user like their coffee", "P4"},
	{"what's my favorite editor", "P5"},
	{"which theme do I prefer, light or dark", "P6"},
	{"what are my preferences for indentation", "P1"},
	{"which editor do I like best", "P5"},
	{"what kind of coffee would I rather have", "P4"},
	{"my preferred style of code review", "P3"},
	{"where does the staging cluster run", "F13"},
	{"when do the orders database backups run", "F14"},
	{"what broke after the Tailwind upgrade", "F2"},
	{"what is the GitHub OAuth callback URL", "F4"},
	{"where is the Neovim config", "F11"},
	{"which namespace does Loki run in", "F5"},
	{"when is the meeting with Dana", "F16"},
	{"renew the TLS certificate", "F15"},
	{"what must commit messages reference", "F8"},
	{"which version of PostgreSQL does the orders database run", "F1"},
}

// TestIntentLabelled: on a mixed store, the questions about decisions and
// preferences find their memory first more often with the intent bonus
// than without, and the other questions are answered as they were.
func TestIntentLabelled(t *testing.T) {
	f := newFake(t)
	for _, m := range intentStore {
		f.writeDoc(t, fdoc{id: m.id, kind: m.kind, scope: "proj", created: t0.Add(-day(float64(m.days))), text: m.text})
	}
	ix := mustOpen(t, f, opts(nil))
	off := DefaultRanking
	off.DecisionBonus = 0
	for _, mode := range []string{ModeLexical, ModeHybrid} {
		var with, without, asked int
		for i, tc := range intentQuestions {
			first := func(r *Ranking) string {
				hits, err := ix.Search(Query{Text: tc.q, Mode: mode, Now: t0, K: 5, Ranking: r})
				if err != nil {
					t.Fatal(err)
				}
				if len(hits) == 0 {
					return ""
				}
				return hits[0].ID
			}
			on, plain := first(nil), first(&off)
			if on == tc.want {
				with++
			}
			if plain == tc.want {
				without++
			}
			if i < 20 {
				asked++
				if on != tc.want {
					t.Logf("%s %q: %s first, want %s", mode, tc.q, on, tc.want)
				}
			} else if on != plain {
				t.Errorf("%s %q asks no decision nor preference: %s first, %s without the bonus", mode, tc.q, on, plain)
			}
			if plain == tc.want && on != tc.want {
				t.Errorf("%s %q: the bonus put %s first over %s", mode, tc.q, on, tc.want)
			}
		}
		t.Logf("%s: %d of %d first with the intent bonus, %d without", mode, with, len(intentQuestions), without)
		if with <= without || with < len(intentQuestions)*4/5 {
			t.Errorf("%s: %d of %d first with the bonus, %d without; want more, and at least 4 in 5", mode, with, len(intentQuestions), without)
		}
	}
}
