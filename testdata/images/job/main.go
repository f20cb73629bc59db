// Command job is the run-to-completion test image.
//
//	job [--cat PATH,...] [--env NAME,...] [--print TEXT] [--print-bytes N] [--sleep SECONDS] [--exit CODE]
//
// It prints each file as "PATH MODE CONTENT" and each variable as
// "NAME=VALUE" (to show what a container received), then TEXT (and N bytes
// of filler, to test output truncation), sleeps, then exits with CODE.
// Flags act in that order whatever their position.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	sleep := flag.Float64("sleep", 0, "seconds to sleep before exiting")
	text := flag.String("print", "", "text to print")
	filler := flag.Int("print-bytes", 0, "bytes of filler to print")
	code := flag.Int("exit", 0, "exit code")
	cat := flag.String("cat", "", "comma-separated files to print with their mode")
	env := flag.String("env", "", "comma-separated environment variables to print")
	flag.Parse()
	for _, path := range strings.Split(*cat, ",") {
		if path == "" {
			continue
		}
		info, err := os.Stat(path)
		b, err2 := os.ReadFile(path)
		if err != nil || err2 != nil {
			fmt.Println(path, "missing")
			continue
		}
		fmt.Printf("%s %04o %s\n", path, info.Mode().Perm(), b)
	}
	for _, name := range strings.Split(*env, ",") {
		if name != "" {
			fmt.Printf("%s=%s\n", name, os.Getenv(name))
		}
	}
	if *text != "" {
		fmt.Println(*text)
	}
	if *filler > 0 {
		line := strings.Repeat("x", 99) + "\n"
		for n := *filler; n > 0; n -= len(line) {
			if n < len(line) {
				line = line[:n]
			}
			os.Stdout.WriteString(line)
		}
	}
	time.Sleep(time.Duration(*sleep * float64(time.Second)))
	os.Exit(*code)
}
