// Package app is Slipway's HTTP front end: the Fiber application with the
// server-rendered dashboard (templ + htmx), its middleware (sessions, CSRF,
// login rate limiting, team and scope checks) and one handler per file,
// named <noun>_<verb>.go. The JSON API lives in app/api and is mounted here.
//
// Handlers read and write through store and the shared operations in
// app/service. app must not import runtime/ to change anything (read-only
// views of Docker come later through a narrow interface) and must not
// import cmd/.
package app
