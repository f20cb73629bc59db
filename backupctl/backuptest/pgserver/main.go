// Command pgserver is the entrypoint of the Postgres test image that
// backuptest.PostgresImage builds from this machine's Debian PostgreSQL
// binaries: it initializes the data directory on first start, then
// becomes the postgres server. Like the official image it reads
// POSTGRES_USER (the superuser, default postgres), POSTGRES_PASSWORD_FILE
// (its password: connections from the network then need it, else they are
// trusted, the environment's network being private) and POSTGRES_DB (a
// database created for it, by default named as the user).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

const data = "/var/lib/postgresql/data"

func main() {
	bin := os.Getenv("PG_BIN")
	if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
		initialize(bin)
	}
	err := syscall.Exec(filepath.Join(bin, "postgres"), []string{"postgres", "-D", data}, os.Environ())
	fail("exec postgres:", err)
}

// initialize runs initdb as the official image does, with the superuser,
// password and database of its environment variables.
func initialize(bin string) {
	user := os.Getenv("POSTGRES_USER")
	if user == "" {
		user = "postgres"
	}
	args := []string{"-D", data, "-U", user, "--encoding=UTF8", "--no-locale", "--auth-local=trust"}
	hba := "host all all 0.0.0.0/0 trust\n"
	if pwFile := os.Getenv("POSTGRES_PASSWORD_FILE"); pwFile != "" {
		args = append(args, "--pwfile="+pwFile, "--auth-host=scram-sha-256")
		hba = "host all all 0.0.0.0/0 scram-sha-256\n"
	} else {
		args = append(args, "--auth-host=trust")
	}
	run(exec.Command(filepath.Join(bin, "initdb"), args...))
	// The official image's POSTGRES_DB defaults to the user; initdb made
	// only postgres.
	db := os.Getenv("POSTGRES_DB")
	if db == "" {
		db = user
	}
	if db != "postgres" {
		single := exec.Command(filepath.Join(bin, "postgres"), "--single", "-D", data, "template1")
		single.Stdin = strings.NewReader(`CREATE DATABASE "` + strings.ReplaceAll(db, `"`, `""`) + `";` + "\n")
		run(single)
	}
	appendFile(filepath.Join(data, "postgresql.conf"), "listen_addresses = '*'\nunix_socket_directories = '/tmp'\n")
	appendFile(filepath.Join(data, "pg_hba.conf"), hba)
}

func run(cmd *exec.Cmd) {
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fail(filepath.Base(cmd.Path)+":", err)
	}
}

func appendFile(path, text string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(text)
		f.Close()
	}
	if err != nil {
		fail(err)
	}
}

func fail(a ...any) {
	fmt.Fprintln(os.Stderr, a...)
	os.Exit(1)
}
