// Command hammer sends GET requests to a URL without pause for a while and
// reports how many failed; it exits 1 when any did. Tests run it inside an
// environment's network to prove a rollout drops no request.
//
//	hammer --url http://web:8080/ --duration 30s [--until-body TEXT]
//
// Every request opens a new connection (no keep-alive) and resolves the
// name again, as a fresh client would.
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	url := flag.String("url", "", "URL to request")
	duration := flag.Duration("duration", 30*time.Second, "how long to hammer")
	until := flag.String("until-body", "", "stop early once this body was seen for 2 seconds")
	flag.Parse()
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{DisableKeepAlives: true},
	}
	var ok, failed int
	var seen time.Time
	deadline := time.Now().Add(*duration)
	for time.Now().Before(deadline) {
		resp, err := client.Get(*url)
		if err != nil {
			failed++
			fmt.Println("fail:", err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			failed++
			fmt.Println("fail: status", resp.StatusCode)
			continue
		}
		ok++
		if *until != "" && strings.TrimSpace(string(body)) == *until {
			if seen.IsZero() {
				seen = time.Now()
			} else if time.Since(seen) > 2*time.Second {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Printf("ok=%d failed=%d\n", ok, failed)
	if failed > 0 || ok == 0 {
		os.Exit(1)
	}
}
