// Command reach reports, forever, which URLs it can fetch: every half
// second it sends one GET to each URL in REACH_URLS (comma-separated), all
// at once, and prints "ok URL BODY" or "fail URL: ERROR" for each. Tests
// run it inside an environment and read its logs to see what that
// environment can reach. The fetches of a round run side by side, so an
// address that never answers delays the round by one timeout, not one per
// URL, and a busy machine still sees every URL tried every few seconds.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// timeout bounds one fetch; generous, so a reachable URL is not reported
// failed because the machine is busy.
const timeout = 3 * time.Second

func main() {
	var urls []string
	for _, u := range strings.Split(os.Getenv("REACH_URLS"), ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	var out sync.Mutex
	for {
		var wg sync.WaitGroup
		for _, u := range urls {
			wg.Go(func() {
				line := fetch(client, u)
				out.Lock()
				defer out.Unlock()
				fmt.Println(line)
			})
		}
		wg.Wait()
		time.Sleep(500 * time.Millisecond)
	}
}

func fetch(client *http.Client, u string) string {
	resp, err := client.Get(u)
	if err != nil {
		return fmt.Sprintf("fail %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("fail %s: status %d", u, resp.StatusCode)
	}
	return fmt.Sprintf("ok %s %s", u, strings.TrimSpace(string(body)))
}
