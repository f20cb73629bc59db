package links

import (
	"sort"

	"github.com/slipwayhq/slipway/manifest"
)

// MaxImporters is how many importing environments one exporting
// environment links to; the oldest links keep their slots.
const MaxImporters = 64

// Reasons an import does not connect.
const (
	// ReasonNotExported: no deployed environment of that name exports the
	// service to the importing environment.
	ReasonNotExported = "not_exported"
	// ReasonLimit: the exporting environment already links to MaxImporters
	// importing environments.
	ReasonLimit = "link_limit"
)

// Environment is one environment or preview and what it deployed.
type Environment struct {
	ID      string
	Name    string
	AppID   string
	AppName string
	Preview bool
	// Deployed is the rendered manifest of its running deployment; nil
	// when nothing is deployed. Only Spec.Services, Exports and Imports
	// are read.
	Deployed *manifest.Manifest
	// Bindings map each application name its deployment's exports and
	// imports use to the application id it bound ("" for a name no
	// application held then).
	Bindings map[string]string
}

// Link is one link that should exist: the exported service of the
// exporting environment and every service of the importing one share a
// network, on which the exported service answers to Alias.
type Link struct {
	ExporterEnvID string
	Service       string
	ImporterEnvID string
	// Alias is <service>.<exporting application's current name>.
	Alias string
}

// Key identifies a link independently of its alias.
func (l Link) Key() string { return l.ExporterEnvID + "/" + l.Service + "/" + l.ImporterEnvID }

// Unconnected is an import that connects to nothing, and why.
type Unconnected struct {
	ImporterEnvID string
	Application   string
	Service       string
	Environment   string
	Reason        string
}

// Result is what Plan decided.
type Result struct {
	Links       []Link
	Unconnected []Unconnected
}

// Directory resolves application names and ids among the team's live
// (not deleted) applications.
type Directory struct {
	byName map[string]string
	names  map[string]string
}

// NewDirectory indexes applications given as id -> name.
func NewDirectory(apps map[string]string) Directory {
	d := Directory{byName: map[string]string{}, names: map[string]string{}}
	for id, name := range apps {
		d.byName[name] = id
		d.names[id] = name
	}
	return d
}

// Resolve returns the application id a name stands for in an environment
// whose deployment bound names as bindings: a bound application while it
// exists (nothing once it is gone), and for a name bound to no application,
// whichever application holds it now.
func (d Directory) Resolve(bindings map[string]string, name string) string {
	if id, ok := bindings[name]; ok && id != "" {
		if _, alive := d.names[id]; alive {
			return id
		}
		return ""
	}
	return d.byName[name]
}

// Bind computes the bindings a new deployment records for names: an
// earlier binding is kept while its application exists; other names bind
// to the application holding them now, or to none ("").
func (d Directory) Bind(previous map[string]string, names []string) map[string]string {
	out := make(map[string]string, len(names))
	for _, n := range names {
		if id := previous[n]; id != "" {
			if _, alive := d.names[id]; alive {
				out[n] = id
				continue
			}
		}
		out[n] = d.byName[n]
	}
	return out
}

// Names lists the application names a manifest's exports and imports use.
func Names(m *manifest.Manifest) []string {
	if m == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, e := range m.Spec.Exports {
		for _, a := range e.Applications {
			add(a)
		}
	}
	for _, im := range m.Spec.Imports {
		add(im.Application)
	}
	sort.Strings(out)
	return out
}

// Plan decides the links of a team's environments. existing lists the
// links that exist now, oldest first: when an exporting environment has
// more candidate importers than MaxImporters, the ones already linked keep
// their slots in that order, then new ones take the free slots in the
// order of envs.
func Plan(dir Directory, envs []Environment, existing []Link) Result {
	type exportKey struct{ appID, envName string }
	exporters := map[exportKey]*Environment{}
	for i := range envs {
		e := &envs[i]
		if e.Deployed == nil || e.Preview {
			continue // previews never export
		}
		exporters[exportKey{e.AppID, e.Name}] = e
	}

	var candidates []Link
	var pending []Unconnected // what each candidate reports when it gets no slot
	var res Result
	for i := range envs {
		im := &envs[i]
		if im.Deployed == nil {
			continue
		}
		for _, imp := range im.Deployed.Spec.Imports {
			envName := imp.Environment
			if envName == "" {
				envName = im.Name
			}
			unconnected := Unconnected{ImporterEnvID: im.ID, Application: imp.Application, Service: imp.Service, Environment: envName, Reason: ReasonNotExported}
			appID := dir.Resolve(im.Bindings, imp.Application)
			ex := exporters[exportKey{appID, envName}]
			if appID == "" || ex == nil || !grants(dir, ex, imp.Service, im) {
				res.Unconnected = append(res.Unconnected, unconnected)
				continue
			}
			candidates = append(candidates, Link{ExporterEnvID: ex.ID, Service: imp.Service, ImporterEnvID: im.ID, Alias: imp.Service + "." + ex.AppName})
			unconnected.Reason = ReasonLimit
			pending = append(pending, unconnected)
		}
	}

	// Slots: per exporting environment, distinct importing environments,
	// existing links first.
	age := map[string]int{}
	for i, l := range existing {
		if _, ok := age[l.ExporterEnvID+"/"+l.ImporterEnvID]; !ok {
			age[l.ExporterEnvID+"/"+l.ImporterEnvID] = i
		}
	}
	order := make([]int, len(candidates))
	for i := range order {
		order[i] = i
	}
	rank := func(l Link, i int) int {
		if a, ok := age[l.ExporterEnvID+"/"+l.ImporterEnvID]; ok {
			return a
		}
		return len(existing) + i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return rank(candidates[order[a]], order[a]) < rank(candidates[order[b]], order[b])
	})
	importers := map[string]map[string]bool{}
	admitted := make([]bool, len(candidates))
	for _, i := range order {
		l := candidates[i]
		set := importers[l.ExporterEnvID]
		if set == nil {
			set = map[string]bool{}
			importers[l.ExporterEnvID] = set
		}
		if !set[l.ImporterEnvID] && len(set) >= MaxImporters {
			continue
		}
		set[l.ImporterEnvID] = true
		admitted[i] = true
	}
	for i, l := range candidates {
		if admitted[i] {
			res.Links = append(res.Links, l)
			continue
		}
		res.Unconnected = append(res.Unconnected, pending[i])
	}
	return res
}

// grants reports whether ex deployed an export of service that lists the
// importing environment's application (and its previews when it is one).
func grants(dir Directory, ex *Environment, service string, im *Environment) bool {
	if !hasService(ex.Deployed, service) {
		return false
	}
	for _, e := range ex.Deployed.Spec.Exports {
		if e.Service != service || im.Preview && !e.Previews {
			continue
		}
		for _, name := range e.Applications {
			if dir.Resolve(ex.Bindings, name) == im.AppID {
				return true
			}
		}
	}
	return false
}

func hasService(m *manifest.Manifest, name string) bool {
	for _, s := range m.Spec.Services {
		if s.Name == name {
			return true
		}
	}
	return false
}
