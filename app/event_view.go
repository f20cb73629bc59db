package app

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views"
	"github.com/slipwayhq/slipway/views/page"
)

// This file turns audit events into what the audit log and the Events tab
// show: one sentence each (who did what to which application and
// environment, with links) instead of raw JSON and internal ids.

// eventNames is what a page of events refers to, read in a constant
// number of queries whatever the page holds.
type eventNames struct {
	now     time.Time
	who     people
	apps    map[string]string // id -> name
	envs    map[string]store.Environment
	deploys map[string]store.DeploymentSummary
}

// loadEventNames reads the team's applications, environments and the
// deployments events name.
func (h *handler) loadEventNames(ctx context.Context, teamID string, events []store.Event) (eventNames, error) {
	n := eventNames{now: h.now(), apps: map[string]string{}, envs: map[string]store.Environment{}}
	var err error
	if n.who, err = h.people(ctx, teamID); err != nil {
		return n, err
	}
	apps, err := h.store.ListApplications(ctx, teamID)
	if err != nil {
		return n, err
	}
	for _, a := range apps {
		n.apps[a.ID] = a.Name
	}
	envs, err := h.store.ListTeamEnvironments(ctx, teamID)
	if err != nil {
		return n, err
	}
	for _, e := range envs {
		n.envs[e.ID] = e
	}
	var ids []string
	for _, e := range events {
		if e.ObjectType == "deployment" {
			ids = append(ids, e.ObjectID)
		}
		if id := detailString(e.Details, "deployment_id"); id != "" {
			ids = append(ids, id)
		}
	}
	n.deploys, err = h.store.DeploymentSummaries(ctx, teamID, ids)
	return n, err
}

// rows turns events into table rows.
func (n eventNames) rows(events []store.Event) []page.EventRow {
	out := make([]page.EventRow, len(events))
	for i, e := range events {
		out[i] = n.row(e)
	}
	return out
}

func (n eventNames) row(e store.Event) page.EventRow {
	var d map[string]any
	_ = json.Unmarshal(e.Details, &d)
	r := page.EventRow{
		ID: e.ID, Verb: e.Verb, Kind: e.ObjectType, Actor: n.actor(e.Actor),
		When: relativeTime(n.now, e.CreatedAt), At: e.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"),
		ISO: e.CreatedAt.UTC().Format(time.RFC3339),
	}
	s := sentence{}
	appID, envID := n.subject(e, d)
	if appID != "" {
		r.Application, r.ApplicationURL = n.appName(appID, d), "/applications/"+appID
		if _, live := n.apps[appID]; !live {
			r.ApplicationURL = ""
		}
	}
	app := func() { s.link(r.Application, r.ApplicationURL) }
	env := func() {
		name := str(d, "environment")
		if e, ok := n.envs[envID]; ok {
			name = e.Name
		}
		if name == "" {
			name = "an environment"
		}
		s.link(name, envLink(appID, r.ApplicationURL))
	}
	switch e.Verb {
	case "application.create":
		s.text("created application ")
		app()
	case "application.delete":
		s.text("deleted application ")
		s.code(str(d, "name"))
	case "application.rename":
		s.text("renamed application ")
		s.code(str(d, "from"))
		s.text(" to ")
		app()
	case "application.apply", "manifest.save":
		s.text("saved revision " + num(d, "revision") + " of the manifest of ")
		app()
	case "manifest.edit":
		s.text("edited the manifest of ")
		app()
		s.text(" (revision " + num(d, "revision") + ")")
	case "manifest.adopted":
		s.text("took the repository's manifest as the new revision of ")
		app()
	case "manifest.repository_reset":
		s.text("reset the manifest of ")
		app()
		s.text(" to its repository's")
	case "deployment.request", "preview.local":
		n.deployment(&s, &r, e, d, "deployed", app, env)
	case "deployment.cancel":
		n.deployment(&s, &r, e, d, "cancelled the deployment of", app, env)
	case "deployment.succeeded", "deployment.failed":
		n.deployment(&s, &r, e, d, "deployed", app, env)
		if e.Verb == "deployment.failed" {
			s.text(": " + str(d, "code"))
		}
	case "deployment.rollback":
		s.text("rolled ")
		env()
		s.text(" of ")
		app()
		s.text(" back after a failed deployment")
	case "deployment.warning":
		s.text("warned while deploying ")
		app()
		s.text(" to ")
		env()
		if msg := str(d, "message"); msg != "" {
			s.text(": " + msg)
		}
	case "environment.create", "preview.create":
		s.text("created environment ")
		env()
		s.text(" of ")
		app()
	case "environment.rename":
		s.text("renamed environment ")
		s.code(str(d, "from"))
		s.text(" of ")
		app()
		s.text(" to ")
		env()
	case "environment.delete", "environment.teardown", "preview.delete", "preview.deleted":
		s.text("deleted environment ")
		s.code(firstOf(str(d, "name"), str(d, "slug"), n.envs[envID].Name))
		s.text(" of ")
		app()
	case "environment.branch_set":
		s.text("set the branch of ")
		env()
		s.text(" of ")
		app()
		s.text(" to ")
		s.code(str(d, "branch"))
	case "environment.sync":
		s.text("turned branch sync of ")
		env()
		s.text(" of ")
		app()
		s.text(onOff(d, "sync"))
	case "environment.telemetry":
		s.text("turned telemetry of ")
		env()
		s.text(" of ")
		app()
		s.text(onOff(d, "granted"))
	case "branch_synced":
		s.text("deployed commit ")
		s.code(short(str(d, "commit")))
		s.text(" of branch ")
		s.code(str(d, "branch"))
		s.text(" to ")
		env()
		s.text(" of ")
		app()
		n.outcome(&r, str(d, "deployment_id"))
	case "secret.set":
		s.text("set secret ")
		s.code(str(d, "name"))
		s.text(" of ")
		app()
		if v := num(d, "version"); v != "" {
			s.text(" (version " + v + ")")
		}
	case "secret.delete":
		s.text("deleted secret ")
		s.code(str(d, "name"))
		s.text(" of ")
		app()
	case "secret.access":
		s.text("changed which environments may mount secret ")
		s.code(str(d, "name"))
		s.text(" of ")
		app()
	case "service.restart":
		s.text("restarted service ")
		s.code(str(d, "service"))
		s.text(" in ")
		env()
		s.text(" of ")
		app()
	case "service.scale":
		s.text("scaled service ")
		s.code(str(d, "service"))
		s.text(" of ")
		app()
		s.text(" to " + views.Plural(int(numValue(d, "replicas")), "replica", "replicas"))
	case "token.create":
		s.text("created API token ")
		s.code(str(d, "name"))
	case "token.revoke":
		s.text("revoked an API token")
	case "member.role_change":
		s.text("changed the role of " + str(d, "email") + " from " + str(d, "from") + " to " + str(d, "to"))
	case "member.remove":
		s.text("removed " + str(d, "email") + " from the team")
	case "invitation.create":
		s.text("invited " + str(d, "email") + " as " + str(d, "role"))
	case "invitation.revoke":
		s.text("revoked an invitation")
	case "team.create":
		s.text("created team " + str(d, "name"))
	case "team.rename":
		s.text("renamed the team to " + str(d, "name"))
	case "account.password_change":
		s.text("changed their password")
	default:
		s.text(strings.ReplaceAll(e.Verb, "_", " ") + " " + strings.ReplaceAll(e.ObjectType, "_", " "))
		if r.Application != "" {
			s.text(" of ")
			app()
		}
		if extra := plainDetails(d); extra != "" {
			s.text(": " + extra)
		}
	}
	r.Parts = s.parts
	return r
}

// deployment writes "<verb> revision N of app to env" and reads the
// deployment's state for the row's badge.
func (n eventNames) deployment(s *sentence, r *page.EventRow, e store.Event, d map[string]any, verb string, app, env func()) {
	dep, ok := n.deploys[e.ObjectID]
	rev := num(d, "revision")
	if ok {
		rev = fmt.Sprint(dep.Revision)
	}
	s.text(verb + " ")
	if rev != "" && rev != "0" {
		s.text("revision " + rev + " of ")
	}
	app()
	s.text(" to ")
	env()
	if ok && r.ApplicationURL != "" {
		s.text(" · ")
		s.link("deployment", r.ApplicationURL+"/deployments/"+dep.ID)
	}
	if e.Verb == "deployment.request" || e.Verb == "preview.local" {
		n.outcome(r, e.ObjectID)
	}
}

// outcome puts the deployment's current state on the row.
func (n eventNames) outcome(r *page.EventRow, deploymentID string) {
	if dep, ok := n.deploys[deploymentID]; ok {
		r.State = string(dep.State)
	}
}

// subject is the application and environment an event concerns.
func (n eventNames) subject(e store.Event, d map[string]any) (appID, envID string) {
	appID, envID = str(d, "application_id"), str(d, "environment_id")
	switch e.ObjectType {
	case "application":
		appID = e.ObjectID
	case "environment":
		envID = e.ObjectID
	case "deployment":
		if dep, ok := n.deploys[e.ObjectID]; ok {
			appID, envID = dep.ApplicationID, dep.EnvironmentID
		}
	}
	if env, ok := n.envs[envID]; ok && appID == "" {
		appID = env.ApplicationID
	}
	return appID, envID
}

func (n eventNames) appName(id string, d map[string]any) string {
	if name, ok := n.apps[id]; ok {
		return name
	}
	if name := str(d, "name"); name != "" {
		return name
	}
	return "a deleted application"
}

// actor names who acted: a member by e-mail, tokens and Slipway itself in words.
func (n eventNames) actor(a string) string {
	switch {
	case a == "worker" || a == "system":
		return "Slipway"
	case a == "github":
		return "GitHub"
	case strings.HasPrefix(a, "sync:"):
		return "Branch sync"
	case strings.HasPrefix(a, "rollback:"):
		return "Automatic rollback"
	}
	return n.who.name(a)
}

func envLink(appID, appURL string) string {
	if appURL == "" {
		return ""
	}
	return appURL + "/environments"
}

// sentence builds an event's sentence from text, code and link parts.
type sentence struct{ parts []page.TextPart }

func (s *sentence) text(t string)       { s.parts = append(s.parts, page.TextPart{Text: t}) }
func (s *sentence) code(t string)       { s.parts = append(s.parts, page.TextPart{Text: t, Code: true}) }
func (s *sentence) link(t, href string) { s.parts = append(s.parts, page.TextPart{Text: t, URL: href}) }

func str(d map[string]any, k string) string {
	v, _ := d[k].(string)
	return v
}

func numValue(d map[string]any, k string) float64 {
	v, _ := d[k].(float64)
	return v
}

func num(d map[string]any, k string) string {
	if _, ok := d[k].(float64); !ok {
		return ""
	}
	return fmt.Sprint(int64(numValue(d, k)))
}

func onOff(d map[string]any, k string) string {
	if on, _ := d[k].(bool); on {
		return " on"
	}
	return " off"
}

func short(commit string) string {
	if len(commit) > shortCommitLength {
		return commit[:shortCommitLength]
	}
	return commit
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// detailString reads one string from an event's raw details.
func detailString(raw json.RawMessage, k string) string {
	var d map[string]any
	_ = json.Unmarshal(raw, &d)
	return str(d, k)
}

// plainDetails writes an unknown event's details as "key: value" pairs,
// leaving out internal ids.
func plainDetails(d map[string]any) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		if !strings.HasSuffix(k, "_id") && !strings.HasSuffix(k, "_ids") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		v := d[k]
		if b, err := json.Marshal(v); err == nil {
			if s, ok := v.(string); ok {
				parts[i] = k + ": " + s
				continue
			}
			parts[i] = k + ": " + string(b)
		}
	}
	return strings.Join(parts, ", ")
}

// relativeTime says how long ago t was, as people say it; the absolute
// time is on the element's title.
func relativeTime(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return views.Plural(int(d.Minutes()), "minute", "minutes") + " ago"
	case d < 24*time.Hour:
		return views.Plural(int(d.Hours()), "hour", "hours") + " ago"
	case d < 30*24*time.Hour:
		return views.Plural(int(d.Hours()/24), "day", "days") + " ago"
	}
	return t.UTC().Format("2006-01-02")
}
