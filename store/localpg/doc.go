// Package localpg runs the private Postgres cluster of `slipway dev`: the
// system's initdb and postgres (found under /usr/lib/postgresql/*/bin),
// with the data directory inside Slipway's data directory and a unix
// socket as the only way in (no TCP). When Slipway runs as root, both run
// as the postgres system user, because Postgres refuses to run as root.
//
// It is the one place outside tests that starts processes (os/exec is
// allowed here for this and nothing else); arguments are always a list,
// never a shell string. It must not import app, pipeline, jobs or
// runtime.
package localpg
