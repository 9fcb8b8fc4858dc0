// Command proxyburst measures what a burst of calls does to mira-proxy
// and what a kill -9 in the middle of it loses (make bench prints it).
//
//	proxyburst [-bin bin/mira-proxy] [-clients 64] [-for 10s]
//
// It starts an upstream that answers every chat call at once, and the
// proxy in front of it on a fresh store; CLIENTS conversations each send
// one call after another, as fast as the answers come, for the time
// given; then the proxy is killed with SIGKILL. It prints the calls
// answered, the most answered turns not yet in the store at any moment
// (sampled every 100 ms: turn files written by the store), the proxy's
// peak RSS, and after the kill how many answered calls have no answer in
// the store's last commit and how long before the kill the oldest of
// them was answered.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("bin", "bin/mira-proxy", "the mira-proxy binary")
	clients := flag.Int("clients", 64, "conversations sending at once")
	dur := flag.Duration("for", 10*time.Second, "how long the burst lasts before the kill")
	flag.Parse()
	if err := run(*bin, *clients, *dur); err != nil {
		fmt.Fprintln(os.Stderr, "proxyburst:", err)
		os.Exit(1)
	}
}

var lastUser = regexp.MustCompile(`"content":"([^"]*)"\}\]\}$`)

func run(bin string, clients int, dur time.Duration) error {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		last := "?"
		if m := lastUser.FindSubmatch(b); m != nil {
			last = string(m[1])
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, "Answer to: "+last)
	}))
	defer up.Close()
	dir, err := os.MkdirTemp("", "proxyburst")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "home")
	os.WriteFile(filepath.Join(dir, "none.yaml"), nil, 0o600)
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--upstream", up.URL+"/v1", "--no-extract", "--summarizer", "extractive", "--recall-k", "0")
	cmd.Env = append(os.Environ(), "MIRA_HOME="+home, "MIRA_CONFIG="+filepath.Join(dir, "none.yaml"), "MIRA_MODEL=",
		"OPENAI_BASE_URL=", "OPENAI_API_KEY=", "MIRA_PROJECT=", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@localhost")
	errp, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(errp)
	re := regexp.MustCompile(`serving (http://\S+/v1)`)
	url := ""
	for url == "" && sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		return fmt.Errorf("mira-proxy exited before it served")
	}
	go io.Copy(io.Discard, errp)

	var mu sync.Mutex
	answered := map[string]time.Time{} // the user's text → when its answer was complete
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var failures atomic.Int64
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	for c := range clients {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				text := fmt.Sprintf("burst %d turn %d", c, i)
				req, _ := http.NewRequest("POST", url+"/chat/completions", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"`+text+`"}]}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Mira-Conversation", fmt.Sprintf("burst-%d", c))
				resp, err := hc.Do(req)
				if err != nil {
					failures.Add(1)
					return // the kill
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || !bytes.Contains(b, []byte("Answer to: "+text)) {
					failures.Add(1)
					return
				}
				mu.Lock()
				answered[text] = time.Now()
				mu.Unlock()
			}
		})
	}
	var peakPending, peakRSS int
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	for time.Since(start) < dur {
		<-tick.C
		mu.Lock()
		n := len(answered)
		mu.Unlock()
		if p := n - countAnswers(home); p > peakPending {
			peakPending = p
		}
		if r := rssKB(cmd.Process.Pid); r > peakRSS {
			peakRSS = r
		}
	}
	tick.Stop()
	if r := hwmKB(cmd.Process.Pid); r > peakRSS {
		peakRSS = r
	}
	cmd.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	close(stop)
	cmd.Wait()
	wg.Wait()

	stored, err := committedAnswers(home)
	if err != nil {
		return err
	}
	lost, oldest := 0, time.Duration(0)
	for text, at := range answered {
		if !stored["Answer to: "+text] {
			lost++
			oldest = max(oldest, killed.Sub(at))
		}
	}
	fmt.Printf("%d conversations for %v: %d calls answered (%.0f/s); answered turns not yet stored at peak: %d; peak RSS %d MB\n",
		clients, dur, len(answered), float64(len(answered))/dur.Seconds(), peakPending, peakRSS/1024)
	fmt.Printf("kill -9: %d answered calls lost their answer (%.1f%%); the oldest was answered %v before the kill\n",
		lost, 100*float64(lost)/float64(max(1, len(answered))), oldest.Round(10*time.Millisecond))
	return nil
}

// countAnswers counts the assistant turns the store has written.
func countAnswers(home string) int {
	n := 0
	filepath.WalkDir(filepath.Join(home, "entries"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && strings.Contains(p, "/turns/assistant/") {
			n++
		}
		return nil
	})
	return n
}

// committedAnswers are the texts of the assistant turns in the store's
// last commit.
func committedAnswers(home string) (map[string]bool, error) {
	out, err := exec.Command("git", "-C", home, "ls-tree", "-r", "--name-only", "HEAD", "entries").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-tree: %v", err)
	}
	got := map[string]bool{}
	for _, p := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.Contains(p, "/turns/assistant/") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(home, p))
		if err != nil {
			continue
		}
		if i := bytes.Index(b, []byte("Answer to: ")); i >= 0 {
			got[strings.TrimSpace(string(b[i:]))] = true
		}
	}
	return got, nil
}

// rssKB and hwmKB are a process's resident set now and at its peak, in
// KiB (Linux; 0 elsewhere).
func rssKB(pid int) int { return procStatus(pid, "VmRSS:") }
func hwmKB(pid int) int { return procStatus(pid, "VmHWM:") }

func procStatus(pid int, key string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			var n int
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &n)
			return n
		}
	}
	return 0
}
