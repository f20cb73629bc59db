// Package layout holds the page shells: App (signed in, with navigation and
// team switcher) and Bare (first run, login, invitations). Shells take the
// page body as a templ.Component. May import views and views/component.
package layout
