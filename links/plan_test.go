package links_test

import (
	"fmt"
	"testing"

	"github.com/slipwayhq/slipway/links"
	"github.com/slipwayhq/slipway/manifest"
)

func deployed(services []string, exports []manifest.Export, imports []manifest.Import) *manifest.Manifest {
	m := &manifest.Manifest{}
	for _, s := range services {
		m.Spec.Services = append(m.Spec.Services, manifest.Service{Name: s})
	}
	m.Spec.Exports, m.Spec.Imports = exports, imports
	return m
}

var (
	apps       = map[string]string{"app_auth": "auth", "app_notes": "notes", "app_billing": "billing"}
	authExport = []manifest.Export{{Service: "api", Applications: []string{"notes"}}}
	importAPI  = []manifest.Import{{Application: "auth", Service: "api"}}
)

func env(id, app, name string, m *manifest.Manifest) links.Environment {
	return links.Environment{ID: id, Name: name, AppID: "app_" + app, AppName: app, Deployed: m}
}

func TestPlan(t *testing.T) {
	t.Parallel()
	authProd := env("auth-prod", "auth", "production", deployed([]string{"api", "admin"}, authExport, nil))
	tests := []struct {
		name        string
		envs        []links.Environment
		wantLinks   []string
		wantReasons []string
	}{
		{name: "same environment name links", envs: []links.Environment{authProd, env("notes-prod", "notes", "production", deployed([]string{"web"}, nil, importAPI))},
			wantLinks: []string{"auth-prod/api/notes-prod=api.auth"}},
		{name: "other environment name does not", envs: []links.Environment{authProd, env("notes-stg", "notes", "staging", deployed([]string{"web"}, nil, importAPI))},
			wantReasons: []string{"notes-stg:not_exported"}},
		{name: "environment field names the exporter", envs: []links.Environment{authProd, env("notes-stg", "notes", "staging", deployed([]string{"web"}, nil,
			[]manifest.Import{{Application: "auth", Service: "api", Environment: "production"}}))},
			wantLinks: []string{"auth-prod/api/notes-stg=api.auth"}},
		{name: "an application not granted", envs: []links.Environment{authProd, env("billing-prod", "billing", "production", deployed([]string{"web"}, nil, importAPI))},
			wantReasons: []string{"billing-prod:not_exported"}},
		{name: "saved but undeployed export connects nothing", envs: []links.Environment{env("auth-prod", "auth", "production", nil), env("notes-prod", "notes", "production", deployed([]string{"web"}, nil, importAPI))},
			wantReasons: []string{"notes-prod:not_exported"}},
		{name: "previews need previews = true", envs: []links.Environment{authProd, preview(env("notes-pr", "notes", "production", deployed([]string{"web"}, nil, importAPI)))},
			wantReasons: []string{"notes-pr:not_exported"}},
		{name: "previews with previews = true", envs: []links.Environment{
			env("auth-prod", "auth", "production", deployed([]string{"api"}, []manifest.Export{{Service: "api", Applications: []string{"notes"}, Previews: true}}, nil)),
			preview(env("notes-pr", "notes", "production", deployed([]string{"web"}, nil, importAPI)))},
			wantLinks: []string{"auth-prod/api/notes-pr=api.auth"}},
		{name: "previews never export", envs: []links.Environment{preview(authProd), env("notes-prod", "notes", "production", deployed([]string{"web"}, nil, importAPI))},
			wantReasons: []string{"notes-prod:not_exported"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := links.Plan(links.NewDirectory(apps), tt.envs, nil)
			assertPlan(t, res, tt.wantLinks, tt.wantReasons)
		})
	}
}

func preview(e links.Environment) links.Environment {
	e.Preview = true
	return e
}

func assertPlan(t *testing.T, res links.Result, wantLinks, wantReasons []string) {
	t.Helper()
	var got, reasons []string
	for _, l := range res.Links {
		got = append(got, l.Key()+"="+l.Alias)
	}
	for _, u := range res.Unconnected {
		reasons = append(reasons, u.ImporterEnvID+":"+u.Reason)
	}
	if fmt.Sprint(got) != fmt.Sprint(wantLinks) || fmt.Sprint(reasons) != fmt.Sprint(wantReasons) {
		t.Fatalf("links %v unconnected %v; want %v and %v", got, reasons, wantLinks, wantReasons)
	}
}

func TestPlan_OldestImportersKeepTheSlots(t *testing.T) {
	t.Parallel()
	all := map[string]string{"app_auth": "auth"}
	envs := []links.Environment{env("auth-prod", "auth", "production", deployed([]string{"api"}, []manifest.Export{{Service: "api", Applications: nil}}, nil))}
	var existing []links.Link
	for i := range links.MaxImporters + 1 {
		app := fmt.Sprintf("a%02d", i)
		all["app_"+app] = app
		envs[0].Deployed.Spec.Exports[0].Applications = append(envs[0].Deployed.Spec.Exports[0].Applications, app)
		envs = append(envs, env(app+"-prod", app, "production", deployed([]string{"web"}, nil, importAPI)))
	}
	// a00 is the newest: every other importer linked before it.
	for i := 1; i <= links.MaxImporters; i++ {
		existing = append(existing, links.Link{ExporterEnvID: "auth-prod", Service: "api", ImporterEnvID: fmt.Sprintf("a%02d-prod", i)})
	}
	res := links.Plan(links.NewDirectory(all), envs, existing)
	if len(res.Links) != links.MaxImporters || len(res.Unconnected) != 1 || res.Unconnected[0].ImporterEnvID != "a00-prod" || res.Unconnected[0].Reason != links.ReasonLimit {
		t.Fatalf("%d links, unconnected %+v; want %d links and a00 waiting for a slot", len(res.Links), res.Unconnected, links.MaxImporters)
	}
}

func TestDirectory_Bind(t *testing.T) {
	t.Parallel()
	dir := links.NewDirectory(map[string]string{"app_new": "auth", "app_kept": "renamed"})
	// auth was bound to an application since deleted: it binds anew.
	// billing was bound to app_kept, since renamed: the binding stays.
	// later names no application yet.
	got := dir.Bind(map[string]string{"auth": "app_gone", "billing": "app_kept"}, []string{"auth", "billing", "later"})
	want := map[string]string{"auth": "app_new", "billing": "app_kept", "later": ""}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Bind = %v, want %v", got, want)
	}
	if id := dir.Resolve(map[string]string{"auth": "app_gone"}, "auth"); id != "" {
		t.Fatalf("a name bound to a deleted application resolved to %q; an application taking the freed name connects nothing", id)
	}
	if id := dir.Resolve(map[string]string{"auth": ""}, "auth"); id != "app_new" {
		t.Fatalf("an unbound name resolved to %q, want whichever application holds it", id)
	}
}
