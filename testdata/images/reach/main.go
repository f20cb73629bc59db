// Command reach reports, forever, which URLs it can fetch: every half
// second it sends one GET to each URL in REACH_URLS (comma-separated) and
// prints "ok URL BODY" or "fail URL: ERROR". Tests run it inside an
// environment and read its logs to see what that environment can reach.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	urls := strings.Split(os.Getenv("REACH_URLS"), ",")
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for {
		for _, u := range urls {
			if u = strings.TrimSpace(u); u == "" {
				continue
			}
			resp, err := client.Get(u)
			if err != nil {
				fmt.Printf("fail %s: %v\n", u, err)
				continue
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				fmt.Printf("fail %s: status %d\n", u, resp.StatusCode)
				continue
			}
			fmt.Printf("ok %s %s\n", u, strings.TrimSpace(string(body)))
		}
		time.Sleep(500 * time.Millisecond)
	}
}
