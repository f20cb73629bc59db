// Command pgserver is the entrypoint of the Postgres test image that
// backuptest.PostgresImage builds from this machine's Debian PostgreSQL
// binaries: it initializes the data directory on first start (trusting
// connections from the environment's private network), then becomes the
// postgres server.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

const data = "/var/lib/postgresql/data"

func main() {
	bin := os.Getenv("PG_BIN")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
		initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--no-locale")
		initdb.Stdout, initdb.Stderr = os.Stdout, os.Stderr
		if err := initdb.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "initdb:", err)
			os.Exit(1)
		}
		appendFile(filepath.Join(data, "postgresql.conf"), "listen_addresses = '*'\nunix_socket_directories = '/tmp'\n")
		appendFile(filepath.Join(data, "pg_hba.conf"), "host all all 0.0.0.0/0 trust\n")
	}
	err := syscall.Exec(filepath.Join(bin, "postgres"), []string{"postgres", "-D", data}, os.Environ())
	fmt.Fprintln(os.Stderr, "exec postgres:", err)
	os.Exit(1)
}

func appendFile(path, text string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(text)
		f.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
