package compose

import (
	"fmt"
	"math"
	"path"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer/internal/convert"
	"github.com/slipwayhq/slipway/manifest/importer/internal/lines"
)

// Import translates a Docker Compose file.
func Import(data []byte, opts convert.Options) (*manifest.Manifest, []convert.Diagnostic) {
	d := &convert.Diags{Lines: lines.YAML(data).Lookup}
	md, err := load(data)
	if err != nil {
		d.Error("", "not a valid Compose file: %s", firstLine(err.Error()))
		return nil, d.List
	}
	t := &translator{opts: opts, d: d, md: md, m: convert.New(), names: convert.Names{}, native: map[string]string{},
		where: map[string]string{}, volumes: map[string]string{}, templated: map[string]bool{}}
	t.vars = convert.Vars{D: d, What: "compose variable"}
	root := convert.NewObj(d, "", md.dict)
	root.Skip("name")
	t.m.Metadata.Name = t.appName()
	for _, it := range md.interp.list {
		switch at := find(md.raw, "", it.text); {
		case it.conditional:
			d.Warn(at, "%s chooses a value by whether compose variable %s is set, which a Slipway variable cannot express, so the value for an unset %s (%q) was written", it.text, it.name, it.name, it.unset)
		case it.literal:
			d.Warn(at, "%s stands where the value must be known when the file is read (a number, size, port or declared name), so its value when %s is unset (%q) was written instead of a variable", it.text, it.name, it.unset)
		}
	}
	if r, ok := md.raw["version"]; ok {
		root.Skip("version")
		d.Warn("version", "obsolete key: Compose ignores version (%v), and so does this import", r)
	}
	services := root.Obj("services")
	if services == nil || len(md.project.Services) == 0 {
		root.Error("services", "the file declares no service")
	}
	t.topLevel(root)
	if services != nil {
		names := services.Keys()
		for _, k := range names {
			t.native[k] = t.names.Claim(k)
		}
		t.findJobs()
		for _, k := range names {
			sc, enabled := md.project.Services[k]
			o := services.Obj(k)
			if o == nil {
				continue
			}
			if !enabled {
				o.Skip(o.Keys()...)
				o.Warn("", "the service runs only with the Compose profile(s) %s, which docker compose up does not start by default; it was not carried over", strings.Join(md.project.DisabledServices[k].Profiles, ", "))
				continue
			}
			t.service(k, o, sc)
		}
		t.routes()
	}
	root.DoneKnown()
	t.vars.Declare(t.m)
	convert.Finalize(t.m, d, t.where, "services")
	// Messages quote values as the file writes them.
	for i := range d.List {
		d.List[i].Message = markerRE.ReplaceAllStringFunc(d.List[i].Message, func(m string) string { return md.interp.at(m).text })
	}
	return t.m, d.List
}

type translator struct {
	opts  convert.Options
	d     *convert.Diags
	md    *model
	m     *manifest.Manifest
	names convert.Names
	vars  convert.Vars
	// native maps each Compose service to its Slipway name.
	native map[string]string
	where  map[string]string // native service name -> source path
	// jobs are the services others wait for with
	// condition: service_completed_successfully, which run to completion.
	jobs map[string]bool
	// volumes maps each top-level volume key to its Slipway volume.
	volumes map[string]string
	// ports are each service's published ports, for routes.
	ports []published
	// secrets and configs are the top-level declarations.
	secrets, configs map[string]*convert.Obj
	// templated are the configs rendered by a template driver.
	templated map[string]bool
}

type published struct {
	service, at string
	ports       []types.ServicePortConfig
}

// appName picks the application name: --name, the file's own name, else
// what Compose would call the project: its directory's name.
func (t *translator) appName() string {
	if t.opts.Name != "" {
		return convert.AppName(t.d, t.opts, "name", "")
	}
	if n, ok := t.md.raw["name"].(string); ok && n != "" && !strings.Contains(n, "$") {
		return convert.AppName(t.d, t.opts, "name", n)
	}
	dir := path.Base(path.Dir(strings.ReplaceAll(t.opts.Filename, `\`, "/")))
	if dir == "." || dir == "/" || dir == "" {
		t.d.Warn("", "the file does not name its project, so the application is named %q; pass --name to choose", "compose-application")
		return "compose-application"
	}
	name := convert.Name(dir)
	t.d.Warn("", "the file does not name its project, so the application is named %q (after its directory, as Compose names projects); pass --name to choose", name)
	return name
}

// findJobs lists the services another waits for with
// service_completed_successfully: one-off tasks, which become jobs.
func (t *translator) findJobs() {
	t.jobs = map[string]bool{}
	for _, sc := range t.md.project.Services {
		for dep, cond := range sc.DependsOn {
			if cond.Condition == types.ServiceConditionCompletedSuccessfully {
				t.jobs[dep] = true
			}
		}
	}
}

// text turns a loaded value into Slipway text: literal parts escaped, each
// interpolated variable a reference to a Slipway variable with its default.
func (t *translator) text(at, s string) string {
	var b strings.Builder
	last := 0
	for _, loc := range markerRE.FindAllStringIndex(s, -1) {
		b.WriteString(convert.EscapeRefs(s[last:loc[0]]))
		it := t.md.interp.at(s[loc[0]:loc[1]])
		b.WriteString(t.vars.Ref(at, it.name, it.def))
		last = loc[1]
	}
	b.WriteString(convert.EscapeRefs(s[last:]))
	return b.String()
}

// fixed is a value Slipway needs as it is, such as a path, a name or a
// file's content, which are never rendered with variables: each
// interpolation is written as its default, and one without a default is an
// error. what says where the value goes, for the messages.
func (t *translator) fixed(at, s, what string) (string, bool) {
	ok := true
	out := markerRE.ReplaceAllStringFunc(s, func(marker string) string {
		it := t.md.interp.at(marker)
		if it.def == nil {
			t.d.Error(at, "%s has no default, and Slipway needs %s as it is (it is not rendered with variables): write the value", it.text, what)
			ok = false
			return ""
		}
		t.d.Warn(at, "Slipway needs %s as it is (it is not rendered with variables), so %s was written as its default %q", what, it.text, *it.def)
		return *it.def
	})
	return out, ok
}

func (t *translator) textAll(at string, list []string) []string {
	if len(list) == 0 {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = t.text(convert.Index(at, i), s)
	}
	return out
}

func (t *translator) service(key string, o *convert.Obj, sc types.ServiceConfig) {
	name := t.native[key]
	if name != key {
		o.Warn("", "service name %q normalized to %q (Slipway names are lowercase letters, digits and hyphens); other services reach it as %s", key, name, name)
	}
	svc := manifest.Service{Name: name}
	if !t.source(&svc, o, sc) {
		o.Skip(o.Keys()...)
		return
	}
	o.Skip("name")
	if o.Has("entrypoint") {
		o.Skip("entrypoint")
		svc.Command = t.textAll(o.At("entrypoint"), sc.Entrypoint)
	}
	if o.Has("command") {
		o.Skip("command")
		// command replaces the image's CMD, keeping its ENTRYPOINT:
		// Slipway's arguments.
		svc.Arguments = t.textAll(o.At("command"), sc.Command)
	}
	t.environment(&svc, o, sc)
	t.dependsOn(&svc, o, sc)
	t.healthcheck(&svc, o, sc)
	isJob := t.deploy(&svc, o, sc)
	t.mounts(&svc, o, sc)
	t.fileMounts(&svc, o, sc)
	if o.Has("ports") {
		o.Skip("ports")
		t.ports = append(t.ports, published{service: name, at: o.At("ports"), ports: sc.Ports})
	}
	t.networks(o, sc)
	t.settings(o, sc)
	o.DoneKnown()
	t.where[name] = o.Path
	if t.jobs[key] || isJob {
		t.job(&svc, sc)
	}
	t.m.Spec.Services = append(t.m.Spec.Services, svc)
}

// source reads image and build. A service that builds from the project
// builds from the repository the file lives in.
func (t *translator) source(svc *manifest.Service, o *convert.Obj, sc types.ServiceConfig) bool {
	if sc.Build == nil {
		if !o.Has("image") {
			o.Error("image", "a service needs an image or a build; the service was not carried over")
			return false
		}
		o.Skip("image")
		ref, err := convert.CheckImage(markerRE.ReplaceAllString(sc.Image, "x"))
		if err != nil {
			o.Error("image", "%v; the service was not carried over", err)
			return false
		}
		if !markerRE.MatchString(sc.Image) {
			svc.Source = manifest.Source{Type: manifest.SourceImage, Image: ref}
		} else {
			svc.Source = manifest.Source{Type: manifest.SourceImage, Image: t.text(o.At("image"), sc.Image)}
		}
		return true
	}
	if o.Has("image") {
		o.Skip("image")
		o.Warn("image", "the service is built; Compose tags the built image %s, which Slipway does not need", sc.Image)
	}
	bo := o.Obj("build")
	b := sc.Build
	build := &manifest.Build{Type: "docker"}
	bo.Skip("context", "dockerfile")
	ctx := b.Context
	var repo *manifest.Repository
	if isRemote(ctx) {
		r, dir, ok := remoteContext(ctx)
		if !ok {
			bo.Error("context", "%q is not a Git URL Slipway can clone", ctx)
			return false
		}
		repo, ctx = r, dir
	} else {
		repo = convert.SelfRepository(t.d, t.opts, o.At("build"))
	}
	ctx, ok1 := t.fixed(bo.At("context"), ctx, "the build context")
	dockerfile, ok2 := t.fixed(bo.At("dockerfile"), b.Dockerfile, "the Dockerfile's path")
	if !ok1 || !ok2 {
		return false
	}
	clean := path.Clean("/" + ctx)
	if path.IsAbs(ctx) || strings.HasPrefix(path.Clean(ctx), "..") {
		bo.Error("context", "the build context %q must stay inside the repository", ctx)
		return false
	}
	rel := strings.TrimPrefix(clean, "/")
	if rel != "" {
		build.Context = rel
	}
	if bo.Has("dockerfile_inline") {
		bo.Skip("dockerfile_inline")
		bo.Error("dockerfile_inline", "an inline Dockerfile has no Slipway equivalent: builds read a Dockerfile from the repository, so commit it and name it in dockerfile")
		return false
	}
	// Compose resolves dockerfile against the context; Slipway against the
	// repository root.
	df := path.Clean(path.Join(rel, dockerfile))
	if path.IsAbs(dockerfile) || strings.HasPrefix(df, "..") {
		bo.Error("dockerfile", "the Dockerfile must stay inside the repository")
		return false
	}
	if df != "Dockerfile" {
		build.Dockerfile = df
	}
	if bo.Has("target") {
		bo.Skip("target")
		build.Target = t.text(bo.At("target"), b.Target)
	}
	// An argument without a value takes its value from the environment
	// docker compose runs in; the loader drops it when that has none.
	for _, k := range t.unvalued("services", sc.Name, "build", "args") {
		if _, kept := b.Args[k]; !kept {
			t.d.Warn(convert.Join(bo.At("args"), k), "the build argument %s takes its value from the environment docker compose runs in, which an import does not have: it is not passed, so the Dockerfile's default applies; give it a value to pass one", k)
		}
	}
	if bo.Has("args") {
		bo.Skip("args")
		for _, k := range convert.SortedKeys(b.Args) {
			at := convert.Join(bo.At("args"), k)
			if !convert.ValidEnvKey(k) {
				t.d.Error(at, "%q is not a valid build argument name", k)
				continue
			}
			if build.Args == nil {
				build.Args = map[string]string{}
			}
			if v := b.Args[k]; v != nil {
				build.Args[k] = t.text(at, *v)
			}
		}
	}
	for _, f := range []struct{ key, msg string }{
		{"secrets", "build secrets have no Slipway equivalent: builds see only the repository"},
		{"ssh", "SSH agent forwarding into builds has no Slipway equivalent"},
		{"additional_contexts", "additional build contexts have no Slipway equivalent: builds see only the repository"},
		{"entitlements", "build entitlements have no Slipway equivalent"},
		{"privileged", "privileged builds have no Slipway equivalent"},
	} {
		unsupported(bo, convert.SeverityError, f.key, f.msg)
	}
	for _, k := range []string{"cache_from", "cache_to", "labels", "tags", "platforms", "network", "shm_size",
		"extra_hosts", "no_cache", "no_cache_filter", "pull", "ulimits", "isolation", "provenance", "sbom"} {
		unsupported(bo, convert.SeverityWarning, k, "this build setting is not carried over: Slipway builds with Docker's defaults (and always pulls base images)")
	}
	bo.DoneKnown()
	svc.Source = manifest.Source{Type: manifest.SourceGit, Repository: repo, Build: build}
	return true
}

// unsupported reports key with msg unless its value is empty, zero or
// false, which asks for nothing. It returns whether it reported.
func unsupported(o *convert.Obj, sev convert.Severity, key, msg string) bool {
	if v, ok := o.M[key]; ok && empty(v) {
		o.Skip(key)
		return false
	}
	return o.Unsupported(sev, key, msg)
}

func empty(v any) bool {
	if v == nil {
		return true
	}
	r := reflect.ValueOf(v)
	switch r.Kind() {
	case reflect.Slice, reflect.Map:
		return r.Len() == 0
	}
	return r.IsZero()
}

// find returns the path of the first string in v (by sorted keys) that
// contains text, or "".
func find(v any, at, text string) string {
	switch v := v.(type) {
	case string:
		if strings.Contains(v, text) {
			return at
		}
	case map[string]any:
		for _, k := range convert.SortedKeys(v) {
			if p := find(v[k], convert.Join(at, k), text); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range v {
			if p := find(e, convert.Index(at, i), text); p != "" {
				return p
			}
		}
	}
	return ""
}

// unvalued lists the keys without a value of the mapping at keys, in the
// file as written (before normalization): KEY: with no value, or a KEY
// list entry without =.
func (t *translator) unvalued(keys ...string) []string {
	var v any = t.md.raw
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for _, k := range convert.SortedKeys(v) {
			if v[k] == nil {
				out = append(out, k)
			}
		}
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok && !strings.Contains(s, "=") {
				out = append(out, s)
			}
		}
	}
	return out
}

func isRemote(ctx string) bool {
	for _, p := range []string{"http://", "https://", "git://", "ssh://", "git@", "github.com/"} {
		if strings.HasPrefix(ctx, p) {
			return true
		}
	}
	return false
}

// remoteContext reads a Git build context, url[#ref[:dir]].
func remoteContext(ctx string) (*manifest.Repository, string, bool) {
	url, frag, _ := strings.Cut(ctx, "#")
	ref, dir, _ := strings.Cut(frag, ":")
	if strings.HasPrefix(url, "github.com/") {
		url = "https://" + url
	}
	if strings.HasPrefix(url, "git@") {
		host, p, ok := strings.Cut(strings.TrimPrefix(url, "git@"), ":")
		if !ok {
			return nil, "", false
		}
		url = "ssh://git@" + host + "/" + p
	}
	repo := &manifest.Repository{URL: url, Branch: "main"}
	switch {
	case len(ref) == 40 && strings.Trim(ref, "0123456789abcdef") == "":
		repo.Branch, repo.Commit = "", ref
	case ref != "":
		repo.Branch = strings.TrimPrefix(strings.TrimPrefix(ref, "refs/heads/"), "refs/tags/")
	}
	return repo, dir, true
}

func (t *translator) environment(svc *manifest.Service, o *convert.Obj, sc types.ServiceConfig) {
	if o.Has("environment") {
		o.Skip("environment")
		for _, k := range convert.SortedKeys(sc.Environment) {
			at := convert.Join(o.At("environment"), k)
			if !convert.ValidEnvKey(k) {
				t.d.Error(at, "%q is not a valid environment variable name", k)
				continue
			}
			v := sc.Environment[k]
			if v == nil {
				// - KEY without a value passes the variable from the
				// environment docker compose runs in.
				convert.SetEnv(svc, k, t.vars.Ref(at, k, nil))
				continue
			}
			val := t.text(at, *v)
			if val != convert.EscapeRefs(*v) && convert.LooksSecret(k) {
				t.d.Warn(at, "%s", convert.VariableSecretNote)
			}
			convert.SetEnv(svc, k, val)
		}
	}
	if o.Has("env_file") {
		o.Skip("env_file")
		var files []string
		for _, f := range sc.EnvFiles {
			files = append(files, f.Path)
		}
		o.Warn("env_file", "the env file %s is not read: add its variables to environment, and mount secrets as stored secret files", strings.Join(files, ", "))
	}
}

func (t *translator) dependsOn(svc *manifest.Service, o *convert.Obj, sc types.ServiceConfig) {
	if !o.Has("depends_on") {
		return
	}
	o.Skip("depends_on")
	for _, dep := range convert.SortedKeys(sc.DependsOn) {
		cond := sc.DependsOn[dep]
		at := convert.Join(o.At("depends_on"), dep)
		native, ok := t.native[dep]
		if !ok {
			t.d.Error(at, "%q is not a service of this file", dep)
			continue
		}
		if t.jobs[dep] {
			// A one-off task becomes a job, and every job runs before any
			// service rolls out.
			continue
		}
		if cond.Condition == types.ServiceConditionHealthy {
			if dc, ok := t.md.project.Services[dep]; ok && (dc.HealthCheck == nil || dc.HealthCheck.Disable) {
				t.d.Warn(at, "%s declares no health check here, so Slipway starts %s once %s runs (it waits for health checks the image defines)", dep, svc.Name, native)
			}
		}
		svc.DependsOn = append(svc.DependsOn, native)
	}
}

// healthcheck maps Compose's test: CMD is a command check; CMD-SHELL is a
// shell script, which Slipway has no equivalent for unless it is an HTTP
// probe of the container itself.
func (t *translator) healthcheck(svc *manifest.Service, o *convert.Obj, sc types.ServiceConfig) {
	if !o.Has("healthcheck") {
		return
	}
	h := o.Obj("healthcheck")
	hc := sc.HealthCheck
	h.Skip("test", "disable")
	if hc.Disable || (len(hc.Test) > 0 && hc.Test[0] == "NONE") {
		h.Skip(h.Keys()...)
		h.Warn("", "disabling the image's health check is not available: Slipway runs the HEALTHCHECK an image defines")
		return
	}
	var check *manifest.Healthcheck
	switch {
	case len(hc.Test) == 0:
		// Only timings: they tune the image's own HEALTHCHECK.
		h.Skip(h.Keys()...)
		h.Warn("", "tuning the image's own health check is not carried over: Slipway runs it with the image's settings")
		return
	case hc.Test[0] == "CMD" && len(hc.Test) > 1:
		check = &manifest.Healthcheck{Type: manifest.HealthcheckCommand, Command: t.textAll(h.At("test"), hc.Test[1:])}
	case hc.Test[0] == "CMD-SHELL" && len(hc.Test) == 2:
		port, probePath, ok := httpProbe(hc.Test[1])
		if !ok {
			h.Error("test", "a shell health check (CMD-SHELL) has no Slipway equivalent: Slipway runs check commands without a shell, so write it as [\"CMD\", ...] or as an HTTP probe of the container")
			h.Skip(h.Keys()...)
			return
		}
		check = &manifest.Healthcheck{Type: manifest.HealthcheckHTTP, Port: manifest.NewInt(port), Path: probePath}
	default:
		h.Error("test", "%q is not a Compose health check test (CMD, CMD-SHELL or NONE)", hc.Test[0])
		h.Skip(h.Keys()...)
		return
	}
	interval := int64(30) // Compose's default
	if hc.Interval != nil {
		h.Skip("interval")
		interval = clampSeconds(*hc.Interval, 1, manifest.MaxHealthcheckInterval)
		check.IntervalSeconds = manifest.NewInt(interval)
	} else {
		check.IntervalSeconds = manifest.NewInt(interval)
	}
	if hc.Timeout != nil {
		h.Skip("timeout")
		timeout := clampSeconds(*hc.Timeout, 1, manifest.MaxHealthcheckInterval)
		if timeout > interval {
			h.Warn("timeout", "Slipway's check timeout cannot exceed its interval; the timeout is %ds", interval)
			timeout = interval
		}
		check.TimeoutSeconds = manifest.NewInt(timeout)
	}
	if hc.StartPeriod != nil {
		h.Skip("start_period")
		if s := clampSeconds(*hc.StartPeriod, 0, manifest.MaxHealthcheckStart); s > 0 {
			check.StartPeriodSeconds = manifest.NewInt(s)
		}
	}
	if hc.Retries != nil {
		h.Skip("retries")
		r := min(max(int64(*hc.Retries), 1), manifest.MaxHealthcheckRetries)
		check.Retries = manifest.NewInt(r)
	}
	unsupported(h, convert.SeverityWarning, "start_interval", "Slipway checks at the same interval while the service starts")
	h.DoneKnown()
	svc.Healthcheck = check
}

func clampSeconds(d types.Duration, lo, hi int64) int64 {
	s := int64(math.Ceil(time.Duration(d).Seconds()))
	return min(max(s, lo), hi)
}

// deploy reads replicas, resources and the update order, and the older
// service-level scale, cpus and mem_limit. It reports whether the service
// is a replicated job.
func (t *translator) deploy(svc *manifest.Service, o *convert.Obj, sc types.ServiceConfig) (isJob bool) {
	var replicas *int
	res := &manifest.Resources{}
	if o.Has("deploy") {
		do := o.Obj("deploy")
		dc := sc.Deploy
		if do.Has("replicas") {
			do.Skip("replicas")
			replicas = dc.Replicas
		}
		if do.Has("mode") {
			do.Skip("mode")
			switch dc.Mode {
			case "", "replicated":
			case "replicated-job":
				isJob = true
			default:
				do.Error("mode", "the %s mode has no Slipway equivalent: services run a replica count, not one task per node", dc.Mode)
			}
		}
		if ro := do.Obj("resources"); ro != nil {
			if lo := ro.Obj("limits"); lo != nil {
				lim := dc.Resources.Limits
				lo.Skip("cpus", "memory")
				setResources(res, float64(lim.NanoCPUs), int64(lim.MemoryBytes))
				unsupported(lo, convert.SeverityWarning, "pids", "Slipway does not limit process counts")
				lo.DoneKnown()
			}
			if rv := ro.Obj("reservations"); rv != nil {
				unsupported(rv, convert.SeverityError, "devices", "device reservations (GPUs) have no Slipway equivalent")
				unsupported(rv, convert.SeverityError, "generic_resources", "generic resource reservations have no Slipway equivalent")
				rv.Skip(rv.Keys()...)
				rv.Warn("", "Slipway sets limits only; reservations were dropped")
			}
			ro.DoneKnown()
		}
		if uo := do.Obj("update_config"); uo != nil {
			uc := dc.UpdateConfig
			if uo.Has("order") {
				uo.Skip("order")
				svc.Rollout = &manifest.Rollout{Order: uc.Order}
			}
			if uo.Has("monitor") {
				uo.Skip("monitor")
				if svc.Rollout == nil {
					svc.Rollout = &manifest.Rollout{}
				}
				svc.Rollout.MonitorSeconds = manifest.NewInt(clampSeconds(uc.Monitor, 1, manifest.MaxRolloutMonitor))
			}
			for _, k := range uo.Keys() {
				if k != "order" && k != "monitor" {
					uo.Skip(k)
					uo.Warn(k, "Slipway replaces one task at a time and pauses a failed rollout; this update setting is not carried over")
				}
			}
		}
		unsupported(do, convert.SeverityWarning, "rollback_config", "rollback settings are not carried over: set each environment's rollback in Slipway")
		unsupported(do, convert.SeverityWarning, "restart_policy", "Swarm restarts a stopped task whatever its exit status; the restart policy is not carried over")
		unsupported(do, convert.SeverityWarning, "placement", "placement constraints are not carried over: Swarm places tasks itself")
		unsupported(do, convert.SeverityWarning, "labels", "service labels are not carried over")
		do.Skip("endpoint_mode")
		do.DoneKnown()
	}
	if o.Has("scale") {
		o.Skip("scale")
		if replicas == nil {
			replicas = sc.Scale
		}
	}
	if replicas != nil {
		switch n := int64(*replicas); {
		case n < 0 || n > manifest.MaxReplicas:
			o.Error("deploy", "%d replicas is outside Slipway's 0-%d", n, manifest.MaxReplicas)
		case n != 1:
			svc.Replicas = manifest.NewInt(n)
		}
	}
	if o.Has("cpus") || o.Has("mem_limit") {
		o.Skip("cpus", "mem_limit")
		if res.CPUMillis == nil && res.MemoryBytes == nil {
			setResources(res, float64(sc.CPUS), int64(sc.MemLimit))
		}
	}
	if res.CPUMillis != nil || res.MemoryBytes != nil {
		svc.Resources = res
	}
	return isJob
}

func setResources(res *manifest.Resources, cpus float64, memory int64) {
	if cpus > 0 {
		res.CPUMillis = manifest.NewInt(int64(math.Round(cpus * 1000)))
	}
	if memory > 0 {
		res.MemoryBytes = manifest.NewInt(memory)
	}
}

// mounts maps volumes: named and anonymous volumes become Slipway volumes;
// host paths (bind mounts) have no equivalent.
func (t *translator) mounts(svc *manifest.Service, o *convert.Obj, sc types.ServiceConfig) {
	if o.Has("volumes") {
		o.Skip("volumes")
		anon := 0
		for i, v := range sc.Volumes {
			at := convert.Index(o.At("volumes"), i)
			source, ok1 := t.fixed(at, v.Source, "a volume's name")
			target, ok2 := t.fixed(at, v.Target, "a mount's target")
			if !ok1 || !ok2 {
				continue
			}
			target, err := convert.CleanPath(target)
			if err != nil {
				t.d.Error(at, "%v", err)
				continue
			}
			switch v.Type {
			case types.VolumeTypeBind:
				t.d.Error(at, "the bind mount of the host path %s has no Slipway equivalent: manifests mount named volumes only, so copy the data into a volume, or the files into the image or a file mount", source)
				continue
			case types.VolumeTypeTmpfs:
				t.d.Warn(at, "the tmpfs at %s is not carried over: the container filesystem is writable scratch space", target)
				continue
			case types.VolumeTypeVolume:
			default:
				t.d.Error(at, "a %s mount has no Slipway equivalent: manifests mount named volumes only", v.Type)
				continue
			}
			vol := ""
			if source == "" {
				anon++
				vol = convert.Name(fmt.Sprintf("%s-%d", svc.Name, anon))
				t.d.Warn(at, "the anonymous volume at %s becomes the named volume %s, which Slipway keeps across deployments", target, vol)
			} else if n, ok := t.volumes[source]; ok {
				vol = n
			} else {
				vol = convert.Name(source)
			}
			if v.Volume != nil && v.Volume.Subpath != "" {
				t.d.Error(at, "mounting the volume's subpath %s has no Slipway equivalent: Slipway mounts whole volumes", v.Volume.Subpath)
				continue
			}
			convert.AddVolume(t.m, vol)
			svc.Mounts = append(svc.Mounts, manifest.Mount{Volume: vol, Target: target, ReadOnly: v.ReadOnly})
		}
	}
	if o.Has("tmpfs") {
		o.Skip("tmpfs")
		o.Warn("tmpfs", "tmpfs mounts are not carried over: the container filesystem is writable scratch space")
	}
	if o.Has("volumes_from") {
		o.Skip("volumes_from")
		o.Error("volumes_from", "sharing another container's volumes has no Slipway equivalent: mount the same named volumes instead")
	}
}

// fileMounts maps secrets (stored Slipway secrets, never copying a value)
// and configs (read-only files).
func (t *translator) fileMounts(svc *manifest.Service, o *convert.Obj, sc types.ServiceConfig) {
	if o.Has("secrets") {
		o.Skip("secrets")
		for i, s := range sc.Secrets {
			at := convert.Index(o.At("secrets"), i)
			target := s.Target
			if target == "" {
				target = s.Source
			}
			target, ok := t.fixed(at, target, "a secret's target")
			if !ok {
				continue
			}
			if !path.IsAbs(target) {
				target = "/run/secrets/" + target
			}
			clean, err := convert.CleanPath(target)
			if err != nil || !strings.HasPrefix(clean, "/run/secrets/") {
				t.d.Error(at, "the secret target %s is outside /run/secrets, where Slipway mounts every secret", target)
				continue
			}
			if s.UID != "" || s.GID != "" || s.Mode != nil {
				t.d.Warn(at, "the secret file's owner and mode are not carried over: Slipway mounts it read-only for every user")
			}
			svc.Secrets = append(svc.Secrets, manifest.SecretMount{Name: convert.Name(s.Source), Target: clean})
		}
	}
	if o.Has("configs") {
		o.Skip("configs")
		for i, c := range sc.Configs {
			at := convert.Index(o.At("configs"), i)
			target := c.Target
			if target == "" {
				target = "/" + c.Source
			}
			target, ok := t.fixed(at, target, "a file's target")
			if !ok {
				continue
			}
			clean, err := convert.CleanPath(target)
			if err != nil {
				t.d.Error(at, "%v", err)
				continue
			}
			file, ok := t.configFile(at, c.Source)
			if !ok {
				continue
			}
			file.Target = clean
			if c.Mode != nil {
				file.Mode = fmt.Sprintf("%04o", int64(*c.Mode)&0o777)
			}
			if c.UID != "" || c.GID != "" {
				t.d.Warn(at, "the file's owner is not carried over: Slipway's files belong to root")
			}
			svc.Files = append(svc.Files, file)
		}
	}
}

// configFile is the content of a top-level config: inline content is
// copied, a file is read from the repository at deployment.
func (t *translator) configFile(at, name string) (manifest.File, bool) {
	cfg, ok := t.md.project.Configs[name]
	if !ok {
		t.d.Error(at, "config %q is not declared", name)
		return manifest.File{}, false
	}
	decl := t.configs[name]
	switch {
	case t.templated[name]:
		return manifest.File{}, false // reported on the declaration
	case cfg.Content != "":
		content, ok := t.fixed(decl.At("content"), cfg.Content, "a file's content")
		return manifest.File{Content: content}, ok
	case cfg.File != "":
		file, ok := t.fixed(decl.At("file"), cfg.File, "a file's path")
		if !ok {
			return manifest.File{}, false
		}
		p := path.Clean(file)
		if path.IsAbs(p) || strings.HasPrefix(p, "..") {
			t.d.Error(decl.At("file"), "the config file %s is outside the repository; Slipway reads files from the manifest's repository", file)
			return manifest.File{}, false
		}
		if t.opts.Repository == "" {
			t.d.Error(decl.At("file"), "the config file %s is read from the project's repository at each deployment, which the file does not name: pass --repository <clone URL> (and --branch)", file)
			return manifest.File{}, false
		}
		return manifest.File{Path: p}, true
	case cfg.Environment != "":
		t.d.Error(decl.At("environment"), "a config taken from the environment variable %s has no Slipway equivalent: file contents are never rendered, so write the content in the config", cfg.Environment)
	case bool(cfg.External):
		t.d.Error(decl.Path, "an external config has no Slipway equivalent: declare its content in the file")
	default:
		t.d.Error(decl.Path, "config %q has no content", name)
	}
	return manifest.File{}, false
}

func (t *translator) networks(o *convert.Obj, sc types.ServiceConfig) {
	if !o.Has("networks") {
		return
	}
	o.Skip("networks")
	for _, n := range convert.SortedKeys(sc.Networks) {
		cfg := sc.Networks[n]
		at := convert.Join(o.At("networks"), n)
		if cfg != nil && len(cfg.Aliases) > 0 {
			t.d.Warn(at, "the network aliases %s are not carried over: other services reach it by its service name", strings.Join(cfg.Aliases, ", "))
		}
		if cfg != nil && (cfg.Ipv4Address != "" || cfg.Ipv6Address != "") {
			t.d.Warn(at, "static addresses are not carried over")
		}
	}
}

// settings reads the container settings Slipway has no field for.
func (t *translator) settings(o *convert.Obj, sc types.ServiceConfig) {
	if o.Has("restart") {
		o.Skip("restart")
		switch r := sc.Restart; {
		case r == "no" || strings.HasPrefix(r, "on-failure"):
			o.Warn("restart", "Swarm restarts a stopped task whatever its exit status; restart: %s is not available", r)
		}
	}
	if o.Has("network_mode") {
		o.Skip("network_mode")
		o.Error("network_mode", "network_mode %s has no Slipway equivalent: every service joins the application's private network", sc.NetworkMode)
	}
	for _, k := range []string{"pid", "ipc", "uts", "cgroup", "userns_mode"} {
		if o.Has(k) {
			o.Skip(k)
			o.Error(k, "sharing the host's or another container's namespaces has no Slipway equivalent")
		}
	}
	for _, f := range []struct{ key, msg string }{
		{"working_dir", "Slipway has no working directory setting; set WORKDIR in the image"},
		{"privileged", "privileged containers have no Slipway equivalent"},
		{"devices", "device access has no Slipway equivalent"},
		{"device_cgroup_rules", "device access has no Slipway equivalent"},
		{"gpus", "GPUs have no Slipway equivalent"},
		{"runtime", "container runtimes have no Slipway equivalent"},
		{"cap_add", "added capabilities have no Slipway equivalent: Swarm gives containers Docker's default set"},
		{"sysctls", "kernel parameters (sysctls) have no Slipway equivalent"},
		{"extra_hosts", "extra hosts file entries have no Slipway equivalent: reach other applications through links"},
		{"external_links", "links to containers outside the file have no Slipway equivalent: reach other applications through links"},
		{"extends", "extends is not read: copy the extended service's settings into this one"},
		{"models", "AI models have no Slipway equivalent"},
		{"provider", "provider services have no Slipway equivalent"},
		{"pre_start", "lifecycle hooks have no Slipway equivalent"},
		{"post_start", "lifecycle hooks have no Slipway equivalent"},
		{"pre_stop", "lifecycle hooks have no Slipway equivalent"},
		{"security_opt", "security options have no Slipway equivalent"},
		{"use_api_socket", "access to the Docker socket has no Slipway equivalent"},
	} {
		unsupported(o, convert.SeverityError, f.key, f.msg)
	}
	for _, f := range []struct{ key, msg string }{
		{"container_name", "Slipway names its containers itself; other services reach this one by its service name"},
		{"hostname", "the hostname is not carried over: other services reach it by its service name"},
		{"domainname", "the domain name is not carried over"},
		{"labels", "container labels are not carried over"},
		{"label_file", "container labels are not carried over"},
		{"annotations", "container annotations are not carried over"},
		{"logging", "logging settings are not carried over: Slipway keeps service logs itself"},
		{"user", "Slipway runs the image's own user: set USER in the image"},
		{"group_add", "supplementary groups are not carried over"},
		{"stop_grace_period", "Slipway has no stop grace setting; Docker's default of 10 seconds applies"},
		{"stop_signal", "Slipway stops services with SIGTERM; set STOPSIGNAL in the image"},
		{"init", "the init process is not carried over"},
		{"read_only", "a read-only root filesystem is not carried over"},
		{"stdin_open", "an open standard input has no use without an attached terminal; it was dropped"},
		{"tty", "a terminal has no use in a service; it was dropped"},
		{"platform", "the platform is not carried over: Swarm runs the image on its nodes' platform"},
		{"pull_policy", "Slipway pulls images at each deployment; the pull policy is not carried over"},
		{"pull_refresh_after", "Slipway pulls images at each deployment; the pull policy is not carried over"},
		{"mem_reservation", "Slipway sets limits only; the reservation was dropped"},
		{"memswap_limit", "Slipway does not limit swap separately"},
		{"mem_swappiness", "swappiness is not carried over"},
		{"cpu_shares", "Slipway sets CPU limits, not relative weights"},
		{"cpu_count", "Slipway sets CPU limits in cores (deploy.resources.limits.cpus)"},
		{"cpu_percent", "Slipway sets CPU limits in cores (deploy.resources.limits.cpus)"},
		{"cpu_period", "Slipway sets CPU limits in cores (deploy.resources.limits.cpus)"},
		{"cpu_quota", "Slipway sets CPU limits in cores (deploy.resources.limits.cpus)"},
		{"cpu_rt_period", "real-time CPU settings are not carried over"},
		{"cpu_rt_runtime", "real-time CPU settings are not carried over"},
		{"cpuset", "CPU pinning is not carried over"},
		{"pids_limit", "Slipway does not limit process counts"},
		{"oom_kill_disable", "OOM settings are not carried over"},
		{"oom_score_adj", "OOM settings are not carried over"},
		{"shm_size", "the /dev/shm size is not carried over"},
		{"ulimits", "ulimits are not carried over"},
		{"dns", "DNS settings are not carried over"},
		{"dns_opt", "DNS settings are not carried over"},
		{"dns_search", "DNS settings are not carried over"},
		{"mac_address", "MAC addresses are not carried over"},
		{"cap_drop", "dropped capabilities are not carried over: Swarm gives containers Docker's default set"},
		{"blkio_config", "block I/O limits are not carried over"},
		{"storage_opt", "storage options are not carried over"},
		{"isolation", "isolation settings are not carried over"},
		{"cgroup_parent", "the cgroup parent is not carried over"},
		{"credential_spec", "credential specs are not carried over"},
		{"volume_driver", "volume drivers are not carried over: Slipway volumes are local"},
		{"develop", "develop (docker compose watch) is not carried over"},
		{"attach", "log attachment is a docker compose up setting; it was dropped"},
		{"links", "link aliases are not carried over: other services reach it by its service name"},
		{"umask", "the umask is not carried over"},
		{"log_driver", "logging settings are not carried over: Slipway keeps service logs itself"},
		{"log_opt", "logging settings are not carried over: Slipway keeps service logs itself"},
		{"net", "network settings are not carried over"},
	} {
		unsupported(o, convert.SeverityWarning, f.key, f.msg)
	}
	// expose declares ports other services reach, as every Slipway service's
	// ports are; profiles were applied by the loader.
	o.Skip("expose", "profiles", "dockerfile")
}

// job makes a one-off service (one others wait for to complete, or a
// replicated-job) a job that runs before every rollout, from a stopped
// holder service whose image, environment and secrets it reuses.
func (t *translator) job(svc *manifest.Service, sc types.ServiceConfig) {
	// The job runs its service's command and arguments: a command of its
	// own would replace the image's ENTRYPOINT, which Compose's command
	// keeps.
	job := manifest.Job{Name: svc.Name, Service: svc.Name, Run: manifest.JobRunBeforeRollout}
	svc.Replicas = manifest.NewInt(0)
	svc.Healthcheck = nil
	if len(t.m.Spec.Jobs) < manifest.MaxJobs {
		t.m.Spec.Jobs = append(t.m.Spec.Jobs, job)
	}
	t.d.Warn(t.where[svc.Name], "%s runs to completion, so it becomes a job run before every rollout (its service stays stopped)", sc.Name)
}

// topLevel reads the file's volumes, networks, secrets and configs.
func (t *translator) topLevel(root *convert.Obj) {
	if vo := root.Obj("volumes"); vo != nil {
		for _, k := range vo.Keys() {
			t.volumes[k] = convert.Name(k)
			o := vo.Obj(k)
			if o == nil {
				continue
			}
			// The loader names every volume after the project; a name set
			// in the file renames the Docker volume.
			o.Skip("name")
			v := t.md.project.Volumes[k]
			if bool(v.External) {
				o.Skip("external")
				o.Warn("external", "an external volume is not reused: Slipway creates the volume %s, empty, so copy the data into it", t.volumes[k])
			}
			if opts := v.DriverOpts; opts["o"] != "" && strings.Contains(opts["o"], "bind") {
				o.Skip("driver", "driver_opts")
				o.Error("driver_opts", "a volume bound to the host path %s has no Slipway equivalent: manifests mount named volumes only", opts["device"])
			}
			unsupported(o, convert.SeverityWarning, "driver", "volume drivers are not carried over: Slipway volumes are local")
			unsupported(o, convert.SeverityWarning, "driver_opts", "volume driver options are not carried over: Slipway volumes are local")
			unsupported(o, convert.SeverityWarning, "labels", "volume labels are not carried over")
			o.DoneKnown()
		}
	}
	if no := root.Obj("networks"); no != nil {
		no.Skip(no.Keys()...)
		for _, k := range no.Keys() {
			if k != "default" {
				no.Warn(k, "network %s is not carried over: all services of a Slipway application share one private network, so services on different Compose networks reach each other", k)
			}
		}
	}
	t.secrets = t.declarations(root, "secrets")
	t.configs = t.declarations(root, "configs")
	for _, k := range convert.SortedKeys(t.secrets) {
		o := t.secrets[k]
		s := t.md.project.Secrets[k]
		name := convert.Name(k)
		switch {
		case s.File != "":
			o.Warn("file", "secret %s is a stored Slipway secret: set its value from %s with slipway app secret before deploying (the file was not read)", name, s.File)
		case s.Environment != "":
			o.Warn("environment", "secret %s is a stored Slipway secret: set its value (docker compose takes it from the variable %s) with slipway app secret before deploying", name, s.Environment)
		default:
			o.Warn("", "secret %s is a stored Slipway secret: set its value with slipway app secret before deploying", name)
		}
		o.Skip(o.Keys()...)
	}
	for _, k := range convert.SortedKeys(t.configs) {
		o := t.configs[k]
		if unsupported(o, convert.SeverityError, "template_driver", "config templates have no Slipway equivalent: Slipway writes a file's content as it is, so write the rendered content") {
			t.templated[k] = true
		}
		o.Skip(o.Keys()...)
	}
	if jo := root.Obj("jobs"); jo != nil {
		jo.Skip(jo.Keys()...)
		for _, k := range jo.Keys() {
			o := jo.Obj(k)
			if o == nil {
				continue
			}
			o.Skip(o.Keys()...)
			if tr := o.Obj("triggers"); tr != nil && tr.Has("schedule") {
				tr.Error("schedule", "scheduled jobs have no Slipway equivalent yet: job %s was not carried over", k)
				continue
			}
			o.Error("triggers", "a job run on demand (docker compose run) has no Slipway equivalent: Slipway jobs run before every rollout, so job %s was not carried over", k)
		}
	}
	unsupported(root, convert.SeverityError, "include", "include is not read: merge the included files into this one")
	unsupported(root, convert.SeverityError, "models", "AI models have no Slipway equivalent")
}

func (t *translator) declarations(root *convert.Obj, key string) map[string]*convert.Obj {
	out := map[string]*convert.Obj{}
	if o := root.Obj(key); o != nil {
		for _, k := range o.Keys() {
			if obj := o.Obj(k); obj != nil {
				out[k] = obj
			}
		}
	}
	return out
}

// httpProbes recognizes the shell health checks that only probe the
// container over HTTP: curl or wget of localhost, with an optional
// "|| exit 1".
func httpProbe(cmd string) (port int64, probePath string, ok bool) {
	fields := strings.Fields(strings.TrimSpace(cmd))
	if n := len(fields); n >= 3 && fields[n-3] == "||" && fields[n-2] == "exit" && fields[n-1] == "1" {
		fields = fields[:n-3]
	}
	if len(fields) < 2 || (fields[0] != "curl" && fields[0] != "wget") {
		return 0, "", false
	}
	url := ""
	for _, f := range fields[1:] {
		if len(f) >= 2 && (f[0] == '"' || f[0] == '\'') && f[len(f)-1] == f[0] {
			f = f[1 : len(f)-1]
		}
		switch {
		case strings.HasPrefix(f, "http://"):
			if url != "" {
				return 0, "", false
			}
			url = f
		case fields[0] == "curl" && curlFlag(f), fields[0] == "wget" && wgetFlag(f):
		default:
			return 0, "", false
		}
	}
	rest, found := strings.CutPrefix(url, "http://")
	if !found {
		return 0, "", false
	}
	hostport, p, _ := strings.Cut(rest, "/")
	host, portText, hasPort := strings.Cut(hostport, ":")
	if v6, after, isV6 := strings.Cut(hostport, "]"); isV6 {
		host = v6 + "]"
		portText, hasPort = strings.CutPrefix(after, ":")
	}
	if host != "localhost" && host != "127.0.0.1" && host != "0.0.0.0" && host != "[::1]" {
		return 0, "", false
	}
	port = 80
	if hasPort {
		n, err := strconv.ParseInt(portText, 10, 64)
		if err != nil || n < 1 || n > 65535 {
			return 0, "", false
		}
		port = n
	}
	probePath = "/" + p
	if err := convert.CheckHTTPPath(probePath); err != nil || strings.ContainsAny(probePath, "$`\"'") {
		return 0, "", false
	}
	return port, probePath, true
}

// curlFlag and wgetFlag accept the options that only quiet a probe or make
// it fail on an error status, as Slipway's probe does (2xx and 3xx pass).
func curlFlag(f string) bool {
	switch f {
	case "-f", "--fail", "-s", "--silent", "-S", "--show-error", "-sf", "-fs", "-fsS", "-sSf", "-fsSL", "-fSs", "-sS", "-L", "--location", "-o/dev/null", "/dev/null", "-o":
		return true
	}
	return false
}

func wgetFlag(f string) bool {
	switch f {
	case "-q", "--quiet", "--spider", "-O", "-", "-O-", "-qO-", "-qO", "--no-verbose", "-nv", "--tries=1", "-t1", "-S":
		return true
	}
	return strings.HasPrefix(f, "--timeout=") || strings.HasPrefix(f, "-T")
}

// nonHTTP are container ports of well-known services that do not speak
// HTTP, which a route would not serve.
var nonHTTP = map[uint32]bool{21: true, 22: true, 25: true, 53: true, 110: true, 143: true, 389: true, 465: true,
	587: true, 636: true, 993: true, 995: true, 1433: true, 1521: true, 1883: true, 2181: true, 3306: true,
	3389: true, 5432: true, 5672: true, 6379: true, 8883: true, 9042: true, 9092: true, 11211: true,
	25565: true, 27017: true, 28015: true, 33060: true}

// routes turns published ports into routes under --domain: the domain
// itself when one service publishes, <service>.<domain> when several do.
// Without --domain they are reported.
func (t *translator) routes() {
	type candidate struct {
		service, at string
		port        uint32
	}
	var routable []candidate
	for _, p := range t.ports {
		var http []uint32
		var other, tls, local []string
		for _, port := range p.ports {
			switch {
			case port.HostIP == "127.0.0.1" || port.HostIP == "::1" || port.HostIP == "localhost":
				local = append(local, fmt.Sprint(port.Target))
			case port.Target == 443:
				tls = append(tls, fmt.Sprint(port.Target))
			case port.Protocol == "udp":
				other = append(other, fmt.Sprintf("%d/udp", port.Target))
			case nonHTTP[port.Target] || (port.AppProtocol != "" && !strings.HasPrefix(port.AppProtocol, "http")):
				other = append(other, fmt.Sprint(port.Target))
			default:
				http = append(http, port.Target)
			}
		}
		if t.opts.Domain == "" {
			var all []string
			for _, port := range p.ports {
				all = append(all, fmt.Sprint(port.Target))
			}
			t.d.Warn(p.at, "Slipway does not publish host ports: container port(s) %s are reached by other services as %s:<port>; pass --domain to route HTTP ones, or add [[spec.routes]]", strings.Join(all, ", "), p.service)
			continue
		}
		if len(local) > 0 {
			t.d.Warn(p.at, "port(s) %s are published on the host's loopback address only, for local use: they are not routed, and other services reach them as %s:<port>", strings.Join(local, ", "), p.service)
		}
		if len(tls) > 0 {
			t.d.Warn(p.at, "port 443 is not routed: Slipway's ingress terminates TLS itself and serves each route over HTTPS")
		}
		if len(other) > 0 {
			t.d.Warn(p.at, "port(s) %s are not routed: Slipway's ingress serves HTTP only, and other services reach them as %s:<port>", strings.Join(other, ", "), p.service)
		}
		if len(http) > 0 {
			routable = append(routable, candidate{p.service, p.at, http[0]})
			if len(http) > 1 {
				t.d.Warn(p.at, "a route serves one port: port %d is routed, the others are reached by other services only", http[0])
			}
		}
	}
	sort.SliceStable(routable, func(i, j int) bool { return routable[i].service < routable[j].service })
	for _, c := range routable {
		host := t.opts.Domain
		if len(routable) > 1 {
			host = c.service + "." + t.opts.Domain
		}
		h, err := convert.CheckHostname(host, false)
		if err != nil {
			t.d.Error("--domain", "%v", err)
			return
		}
		t.m.Spec.Routes = append(t.m.Spec.Routes, manifest.Route{Name: c.service, Hostname: h, Service: c.service, Port: int(c.port), Visibility: manifest.VisibilityPublic})
	}
}
