// Command fakepostgres stands in for the official postgres image in tests
// that cannot pull it. As /app it checks that the password file the
// official image reads (POSTGRES_PASSWORD_FILE) is mounted and not empty,
// then accepts TCP connections on 5432 and closes them. The same binary is
// installed as /usr/bin/pg_isready, where it exits 0 when something accepts
// connections on 127.0.0.1:5432, so a health check written for the real
// image passes against this one.
package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if filepath.Base(os.Args[0]) == "pg_isready" {
		os.Exit(isReady())
	}
	if f := os.Getenv("POSTGRES_PASSWORD_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil || strings.TrimSpace(string(b)) == "" {
			fmt.Fprintf(os.Stderr, "fakepostgres: POSTGRES_PASSWORD_FILE %s is unreadable or empty: %v\n", f, err)
			os.Exit(1)
		}
	}
	ln, err := net.Listen("tcp", ":5432")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakepostgres:", err)
		os.Exit(1)
	}
	fmt.Println("fakepostgres: accepting connections on :5432")
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakepostgres:", err)
			os.Exit(1)
		}
		c.Close()
	}
}

func isReady() int {
	c, err := net.DialTimeout("tcp", "127.0.0.1:5432", 2*time.Second)
	if err != nil {
		fmt.Println("127.0.0.1:5432 - no response")
		return 2
	}
	c.Close()
	fmt.Println("127.0.0.1:5432 - accepting connections")
	return 0
}
