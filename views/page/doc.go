// Package page holds the dashboard's full pages. Each takes its data as
// plain view-model parameters and embeds partials for the parts htmx
// replaces. May import views, views/component and views/partial.
package page
