// Package views is the dashboard's HTML, written in templ: layout/ (page
// shells), page/ (full pages), partial/ (what htmx swaps in; a page embeds
// the same partial), component/ (buttons, fields, badges).
//
// This package itself holds only the per-request values every template may
// read from ctx (the signed-in user, current team, CSRF token). Views take
// plain view models as parameters; they must not import the store, Fiber or
// app: the handlers in app convert store rows into these shapes.
package views
