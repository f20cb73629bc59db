// Command web is the HTTP test image: a small server whose behaviour tests
// steer through the environment.
//
//	PORT            listening port (default 8080)
//	HEALTHY=false   /health answers 500
//	VERSION         echoed by /version, so a rollout can be observed
//	DRAIN_SECONDS   keep serving this long after SIGTERM before shutting
//	                down (default 2), so DNS stops pointing at a task before
//	                it refuses connections
//
// Endpoints: /health, /version, /whoami (hostname), /env/<NAME>,
// /file?path=<absolute path>, /files?root=<absolute path> (a tar of every
// regular file under it as the container sees them, mounts included, but
// not /proc, /sys or /dev), /log?text=T&n=N (writes "T" to stdout, or N
// lines "T 0".."T N-1", so tests make log lines), /burn?ms=N (keeps one
// core busy for N milliseconds, at most 10000, so tests make CPU load),
// / (200 "ok").
package main

import (
	"archive/tar"
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	port := envOr("PORT", "8080")
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		if os.Getenv("HEALTHY") == "false" {
			http.Error(w, "unhealthy on purpose", http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, os.Getenv("VERSION"))
	})
	mux.HandleFunc("/whoami", func(w http.ResponseWriter, r *http.Request) {
		h, _ := os.Hostname()
		fmt.Fprintln(w, h)
	})
	mux.HandleFunc("/env/", func(w http.ResponseWriter, r *http.Request) {
		v, ok := os.LookupEnv(strings.TrimPrefix(r.URL.Path, "/env/"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, v)
	})
	mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(r.URL.Query().Get("path"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		w.Write(b)
	})
	mux.HandleFunc("/files", func(w http.ResponseWriter, r *http.Request) {
		tw := tar.NewWriter(w)
		filepath.WalkDir(r.URL.Query().Get("root"), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: skipped
			}
			if d.IsDir() && (path == "/proc" || path == "/sys" || path == "/dev") {
				return filepath.SkipDir
			}
			if !d.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			if err := tw.WriteHeader(&tar.Header{Name: path, Mode: 0o444, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
				return err
			}
			_, err = tw.Write(b)
			return err
		})
		tw.Close()
	})
	mux.HandleFunc("/log", func(w http.ResponseWriter, r *http.Request) {
		text := r.URL.Query().Get("text")
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil || n < 1 {
			fmt.Println(text)
		} else {
			for i := range min(n, 10000) {
				fmt.Println(text, i)
			}
		}
		fmt.Fprintln(w, "logged")
	})
	mux.HandleFunc("/burn", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		n := 0
		for end := time.Now().Add(time.Duration(min(max(ms, 0), 10000)) * time.Millisecond); time.Now().Before(end); {
			for range 10000 {
				n++
			}
		}
		fmt.Fprintln(w, "burnt", n)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	srv := &http.Server{Addr: ":" + port, Handler: mux, ReadHeaderTimeout: 5 * time.Second}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		drain, _ := strconv.Atoi(envOr("DRAIN_SECONDS", "2"))
		time.Sleep(time.Duration(drain) * time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}()
	fmt.Println("listening on", port)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
