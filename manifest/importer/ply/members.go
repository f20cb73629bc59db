package ply

import (
	"errors"
	neturl "net/url"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer/internal/convert"
)

// member is one composition member: its services, volumes and secrets, the
// port routes target, and the params other members read as {name.param}.
type member struct {
	services []manifest.Service
	volumes  []string
	secrets  []manifest.SecretDeclaration
	port     int64
	params   *namespace
	// secretParams names the params the registry package mints, which an
	// override cannot set.
	secretParams map[string]bool
}

// composition translates [[service]] (or [[app]]) members into services of
// one application.
func (t *translator) composition(members []*convert.Obj) {
	type pending struct {
		o    *convert.Obj
		name string
	}
	// Pass 1: names and what each member provides, so env can read any
	// member's params whatever the order.
	var list []pending
	for _, o := range members {
		run, _ := o.Str("run")
		plyName, hasName := o.Str("name")
		if !hasName {
			plyName = defaultName(run)
		}
		if plyName == "" {
			o.Error("name", "cannot derive a member name from run = %q: add name = \"…\"; this member was not carried over", run)
			o.Skip(o.Keys()...)
			continue
		}
		if _, dup := t.memberNames[plyName]; dup {
			o.Error("name", "member name %q is used twice; this member was not carried over", plyName)
			o.Skip(o.Keys()...)
			continue
		}
		native := t.names.Claim(plyName)
		if native != plyName {
			o.Warn("name", "member name %q becomes the service %q", plyName, native)
		}
		t.memberNames[plyName] = native
		mem, ok := t.member(o, run, native)
		if !ok {
			o.Skip(o.Keys()...)
			continue
		}
		t.members[plyName] = mem
		t.overrides(o, mem)
		for _, v := range mem.volumes {
			convert.AddVolume(t.m, v)
		}
		t.m.Spec.Secrets = append(t.m.Spec.Secrets, mem.secrets...)
		for i := range mem.services {
			t.where[mem.services[i].Name] = o.Path
			t.m.Spec.Services = append(t.m.Spec.Services, mem.services[i])
		}
		list = append(list, pending{o: o, name: plyName})
	}
	// Pass 2: env, waits, routes, volumes, on the final slice.
	for _, p := range list {
		for i := range t.m.Spec.Services {
			if t.m.Spec.Services[i].Name == t.memberNames[p.name] {
				t.memberRest(&t.m.Spec.Services[i], p.o, p.name)
			}
		}
	}
}

// defaultName is the member name ply derives from run: the package without
// its namespace or version, the image name of a docker:// reference, the
// repository of a git+ one, or the first dash-separated part of a path's
// last element.
func defaultName(run string) string {
	switch {
	case strings.HasPrefix(run, "docker://"):
		last := path.Base(strings.TrimPrefix(run, "docker://"))
		last, _, _ = strings.Cut(last, "@")
		if i := strings.LastIndex(last, ":"); i >= 0 {
			last = last[:i]
		}
		return last
	case strings.HasPrefix(run, "git+"):
		return strings.TrimSuffix(path.Base(strings.SplitN(strings.TrimPrefix(run, "git+"), "#", 2)[0]), ".git")
	case strings.HasPrefix(run, "http://"), strings.HasPrefix(run, "https://"), strings.HasPrefix(run, "./"),
		strings.HasPrefix(run, "../"), strings.HasPrefix(run, "/"), run == ".", strings.HasSuffix(run, ".img"):
		base := path.Base(path.Clean(run))
		if base == "." || base == "/" {
			return ""
		}
		stem, _, _ := strings.Cut(strings.TrimSuffix(base, ".img"), "-")
		return stem
	}
	name, _, _ := strings.Cut(run, "@")
	return path.Base(name)
}

// member resolves what run names: a registry package, a docker:// image,
// a git repository or a local directory.
func (t *translator) member(o *convert.Obj, run, native string) (*member, bool) {
	switch {
	case run == "":
		o.Error("run", "a member needs run = \"<package>@<version>\", \"./dir\", \"docker://image\" or \"git+https://…\"")
		return nil, false
	case strings.HasPrefix(run, "docker://"):
		ref, err := convert.CheckImage(strings.TrimPrefix(run, "docker://"))
		if err != nil {
			o.Error("run", "%v", err)
			return nil, false
		}
		return plainMember(native, manifest.Source{Type: manifest.SourceImage, Image: ref}), true
	case strings.HasPrefix(run, "git+"):
		url, ref, _ := strings.Cut(strings.TrimPrefix(run, "git+"), "#")
		if !cloneable(url) {
			o.Error("run", "%q is not a git URL Slipway can clone (http(s), ssh, git or file, with a host and no password)", run)
			return nil, false
		}
		repo := &manifest.Repository{URL: url}
		switch {
		case len(ref) == 40 && isHex(ref):
			repo.Commit = ref
		case ref == "":
			repo.Branch = "main"
			o.Warn("run", "ply builds the repository's default branch; Slipway needs a branch name, so main is assumed (write #<branch> to choose)")
		case branchRE.MatchString(ref) && !strings.Contains(ref, "..") && !strings.Contains(ref, "//") && !strings.Contains(ref, "/.") && !strings.HasSuffix(ref, ".lock") && !strings.HasSuffix(ref, "/") && !strings.HasSuffix(ref, "."):
			repo.Branch = ref
		default:
			o.Error("run", "%q is not a branch name or a full commit hash", ref)
			return nil, false
		}
		o.Warn("run", "the repository is built with Docker: it needs a Dockerfile at its root (ply builds it from its own ply.toml instead), and its ply.toml settings (ports, env, params) are not read")
		return plainMember(native, manifest.Source{Type: manifest.SourceGit, Repository: repo, Build: &manifest.Build{Type: "docker"}}), true
	case strings.HasPrefix(run, "http://"), strings.HasPrefix(run, "https://"):
		o.Error("run", "a ply image fetched by URL has no Slipway equivalent: Slipway runs Docker images or builds a Dockerfile, so publish the app as a Docker image (docker://…) or build it from its repository")
		return nil, false
	case strings.HasSuffix(run, ".img") || strings.HasPrefix(run, "/"):
		o.Error("run", "a ply image file has no Slipway equivalent: Slipway runs Docker images or builds a Dockerfile")
		return nil, false
	case strings.HasPrefix(run, "./") || strings.HasPrefix(run, "../") || run == ".":
		dir := path.Clean(run)
		if strings.HasPrefix(dir, "..") {
			o.Error("run", "%q leaves the repository; Slipway builds from the manifest's own repository", run)
			return nil, false
		}
		b := &manifest.Build{Type: "docker"}
		if dir != "." {
			b.Context, b.Dockerfile = dir, path.Join(dir, "Dockerfile")
		}
		o.Warn("run", "the directory is built with Docker from %s (ply builds it from its own ply.toml instead), and its ply.toml settings (ports, env, params) are not read", path.Join(dir, "Dockerfile"))
		return plainMember(native, manifest.Source{Type: manifest.SourceGit, Repository: convert.SelfRepository(t.d, t.opts, o.At("run")), Build: b}), true
	}
	pkg, version, hasVersion := strings.Cut(run, "@")
	// ply's own namespace holds the packages the table maps.
	pkg = strings.TrimPrefix(pkg, "ply/")
	build, known := registry[pkg]
	if !known {
		o.Error("run", "registry package %q has no Slipway translation (known: postgres, redis, valkey); replace it with a Docker image (run = \"docker://…\")", pkg)
		return nil, false
	}
	if !hasVersion {
		version = "latest"
		o.Warn("run", "ply runs the newest %s; the image tag is latest, so write %s@<major> to pin it", pkg, pkg)
	} else if !tagRE.MatchString(version) {
		o.Error("run", "%q needs an exact version Slipway can use as the image tag, such as %s@17", run, pkg)
		return nil, false
	}
	overrides := map[string]string{}
	if p, ok := o.M["params"].(map[string]any); ok {
		for k, v := range p {
			if s, ok := v.(string); ok && !strings.ContainsAny(s, "${") {
				overrides[k] = s
			}
		}
	}
	m := build(native, version, overrides)
	o.Warn("run", "ply's %s package becomes the official image %s; settings baked into the ply package may differ", pkg, m.services[0].Source.Image)
	return m, true
}

var (
	tagRE    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	branchRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}$`)
)

// cloneable accepts the repository URLs Slipway clones.
func cloneable(raw string) bool {
	if strings.ContainsAny(raw, " \t") || convert.TextProblem(raw, false) != "" {
		return false
	}
	u, err := neturl.Parse(raw)
	if err != nil {
		return false
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		return false
	}
	switch u.Scheme {
	case "file":
		return u.Path != ""
	case "git", "http", "https", "ssh":
		return u.Host != ""
	}
	return false
}

func isHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// plainMember is a member whose own ply.toml is not read: it offers the
// facts its name gives, and its port once a publish names one.
func plainMember(native string, src manifest.Source) *member {
	ns := newNamespace()
	ns.facts["host"] = param{value: native}
	ns.facts["name"] = param{value: native}
	for _, f := range []string{"port", "addr", "base_url"} {
		ns.missing[f] = "the member's own ply.toml is not read; add publish = \"<host>:<container>\" to name its port"
	}
	return &member{services: []manifest.Service{{Name: native, Source: src}}, params: ns}
}

// overrides applies a member's params table: plain values the registry
// package consumed, and values for the member's own namespace.
func (t *translator) overrides(o *convert.Obj, mem *member) {
	p := o.Obj("params")
	if p == nil {
		return
	}
	for _, k := range p.Keys() {
		v, ok := p.Str(k)
		if !ok {
			continue
		}
		if mem.secretParams[k] {
			p.Warn(k, "the %s param is a secret Slipway generates for each environment; the value set here is not carried over", k)
			continue
		}
		x := expander{holes: true, vars: &t.vars, at: p.At(k), lookup: func(ref string) (param, error) {
			return t.memberParam(mem, ref)
		}}
		val, err := x.expand(v)
		if err != nil {
			p.Error(k, "%v", err)
			continue
		}
		mem.params.declared[k] = val
	}
}

// memberParam reads {param}, {self.param} or {member.param} for mem.
func (t *translator) memberParam(mem *member, ref string) (param, error) {
	app, name, qualified := strings.Cut(ref, ".")
	if !qualified || app == "self" {
		if !qualified {
			name = ref
		}
		return mem.params.get(name)
	}
	other, ok := t.members[app]
	if !ok {
		return param{}, errors.New("{" + ref + "} references no member named " + app)
	}
	return other.params.get(name)
}

// memberRest translates what a member sets on its service: env, waits,
// routes, volumes and scale.
func (t *translator) memberRest(svc *manifest.Service, o *convert.Obj, plyName string) {
	o.Skip("run", "name", "params")
	mem := t.members[plyName]
	deps := map[string]bool{}
	addDep := func(ply string) {
		if native, ok := t.memberNames[ply]; ok && native != svc.Name && !deps[native] {
			deps[native] = true
			svc.DependsOn = append(svc.DependsOn, native)
		}
	}
	// Ports first: {self.port} and routes read them.
	port := mem.port
	internal := true
	for i, pub := range t.list(o, "publish") {
		container, isInternal, ok := parsePublish(pub)
		if !ok {
			o.D.Error(listAt(o, "publish", i), "%q is not a publish such as 8080, 8080:3000, 127.0.0.1:8080:3000 or internal:3000", pub)
			continue
		}
		internal = internal && isInternal
		if port == 0 {
			port = container
		}
	}
	if o.Has("publish") && !internal {
		o.Warn("publish", "Slipway does not publish host ports; other services reach it on the application network, and the public reach it through a route (domain)")
	}
	if port != 0 && mem.port == 0 {
		ps := strconv.FormatInt(port, 10)
		mem.params.facts["port"] = param{value: ps}
		mem.params.facts["addr"] = param{value: svc.Name + ":" + ps}
		mem.params.facts["base_url"] = param{value: "http://" + svc.Name + ":" + ps}
	}
	t.memberEnv(svc, o, mem, addDep)
	for i, a := range t.list(o, "after") {
		t.after(o, i, a, addDep)
	}
	hosts := map[string]bool{}
	for i, domain := range t.list(o, "domain") {
		at := listAt(o, "domain", i)
		host, err := convert.CheckHostname(domain, false)
		switch {
		case err != nil:
			t.d.Error(at, "%v", err)
		case port == 0:
			t.d.Error(at, "the route needs the member's container port, which is in its own ply.toml; add publish = \"<host>:<container>\" or write the route by hand")
		case !hosts[host]:
			hosts[host] = true
			t.m.Spec.Routes = append(t.m.Spec.Routes, manifest.Route{Hostname: host, Service: svc.Name, Port: int(port), Visibility: manifest.VisibilityPublic})
		}
	}
	volNames := convert.Names{}
	for i, v := range t.list(o, "volume") {
		t.memberVolume(svc, o, i, v, volNames)
	}
	if s, ok := o.Raw("scale"); ok {
		if n, isInt := convert.AsInt(s); isInt && n >= 1 && n <= manifest.MaxReplicas {
			if n != 1 {
				svc.Replicas = manifest.NewInt(n)
			}
		} else if m, isMap := s.(map[string]any); isMap {
			if n, ok := convert.AsInt(m["min"]); ok && n >= 1 && n <= manifest.MaxReplicas && n != 1 {
				svc.Replicas = manifest.NewInt(n)
			}
			o.Warn("scale", "autoscaling is not carried over: the service runs min replicas (at least 1)")
		} else {
			o.Error("scale", "expected a replica count from 1 to %d", manifest.MaxReplicas)
		}
	}
	o.Unsupported(convert.SeverityWarning, "egress", "egress enforcement is not carried over: Slipway does not restrict egress")
	o.Unsupported(convert.SeverityError, "build", "ply runs this build command on the host before running the member; Slipway builds a Dockerfile, so run it in the repository's Dockerfile")
	o.Done()
}

// list reads a member key that takes one string or an array of strings.
func (t *translator) list(o *convert.Obj, key string) []string {
	switch v := o.M[key].(type) {
	case nil:
		return nil
	case string:
		o.Skip(key)
		return []string{v}
	default:
		out, _ := o.Strings(key)
		return out
	}
}

// listAt is the source path of the i-th value of a key that takes one
// string or an array of them.
func listAt(o *convert.Obj, key string, i int) string {
	if _, isList := o.M[key].([]any); isList {
		return convert.Index(o.At(key), i)
	}
	return o.At(key)
}

// memberEnv reads env (or its original alias e): an array of "KEY=VALUE"
// strings, as ply writes it, or a table.
func (t *translator) memberEnv(svc *manifest.Service, o *convert.Obj, mem *member, addDep func(string)) {
	key := "env"
	if o.Has("e") {
		if o.Has("env") {
			o.Skip("env")
			o.Error("e", "a member sets both env and e, which are the same key; keep env")
			o.Skip("e")
			return
		}
		key = "e"
	}
	type entry struct{ k, v, at string }
	var entries []entry
	switch v := o.M[key].(type) {
	case nil:
		return
	case []any:
		o.Skip(key)
		for i, item := range v {
			at := convert.Index(o.At(key), i)
			s, ok := item.(string)
			k, val, hasEq := strings.Cut(s, "=")
			if !ok || !hasEq || k == "" {
				t.d.Error(at, "expected a \"KEY=VALUE\" string")
				continue
			}
			entries = append(entries, entry{k, val, at})
		}
	case map[string]any:
		e := o.Obj(key)
		for _, k := range e.Keys() {
			if val, ok := e.Scalar(k); ok {
				entries = append(entries, entry{k, val, e.At(k)})
			}
		}
	default:
		o.Skip(key)
		o.Error(key, "expected an array of \"KEY=VALUE\" strings")
		return
	}
	for _, e := range entries {
		x := expander{holes: true, vars: &t.vars, at: e.at, lookup: func(ref string) (param, error) {
			// A {member.param} reference is also a wait for that member.
			if app, _, ok := strings.Cut(ref, "."); ok && app != "self" {
				addDep(app)
			}
			return t.memberParam(mem, ref)
		}}
		p, err := x.expand(e.v)
		if err != nil {
			t.d.Error(e.at, "%v", err)
			continue
		}
		t.setParamAt(svc, e.at, e.k, p)
	}
}

// setParamAt is setParam for values whose path is not an object's key.
func (t *translator) setParamAt(svc *manifest.Service, at, k string, p param) {
	if !convert.ValidEnvKey(k) {
		t.d.Error(at, "%q is not a valid environment variable name", k)
		return
	}
	if p.secret != "" {
		target := convert.MountSecret(svc, p.secret, p.secret)
		convert.SetEnv(svc, k+"_FILE", target)
		t.d.Warn(at, "Slipway never puts secrets in the environment: the secret is the file %s, named by %s_FILE instead of %s (images such as postgres read *_FILE; others must be adapted)", target, k, k)
		return
	}
	if convert.DropSecretFile(svc, k) {
		t.d.Warn(at, "%s set here replaces the generated secret file the package reads through %s_FILE", k, k)
	}
	if strings.Contains(p.value, "${{ vars.") && convert.LooksSecret(k) {
		t.d.Warn(at, "%s", convert.VariableSecretNote)
	}
	convert.SetEnv(svc, k, p.value)
}

// after reads one wait condition: member, member.param, or
// member.param == 'value'. Slipway starts a service once its dependencies
// run and pass their health checks, which is the first form.
func (t *translator) after(o *convert.Obj, i int, cond string, addDep func(string)) {
	at := listAt(o, "after", i)
	head, value, hasEq := strings.Cut(cond, "==")
	head = strings.TrimSpace(head)
	app, param, hasParam := strings.Cut(head, ".")
	if hasEq {
		value = strings.TrimSpace(value)
		if len(value) < 2 || (value[0] != '\'' && value[0] != '"') || value[len(value)-1] != value[0] || !hasParam {
			t.d.Error(at, "%q is not a wait condition (member, member.param or member.param == 'value')", cond)
			return
		}
		value = value[1 : len(value)-1]
	}
	if !identRE.MatchString(app) || (hasParam && !identRE.MatchString(param)) {
		t.d.Error(at, "%q is not a wait condition (member, member.param or member.param == 'value')", cond)
		return
	}
	if _, known := t.memberNames[app]; !known {
		t.d.Error(at, "%q waits for %s, which is not a member of this composition", cond, app)
		return
	}
	addDep(app)
	if hasParam && !(param == "state" && value == "healthy") {
		t.d.Warn(at, "Slipway starts this service once %s runs and passes its health check; it does not wait for %s to publish %s", t.memberNames[app], app, param)
	}
}

var identRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// parsePublish reads one publish: PORT, HOST:CONTAINER, IP:HOST:CONTAINER
// or internal:[HOST:]CONTAINER, returning the container port.
func parsePublish(s string) (container int64, internal, ok bool) {
	s = strings.TrimSpace(s)
	if rest, isInternal := strings.CutPrefix(s, "internal:"); isInternal {
		s, internal = rest, true
	}
	parts := strings.Split(s, ":")
	last := parts[len(parts)-1]
	last, _, _ = strings.Cut(last, "/")
	n, err := strconv.ParseInt(last, 10, 64)
	if err != nil || n < 1 || n > 65535 {
		return 0, false, false
	}
	return n, internal, true
}

// memberVolume reads one volume: "/path" (a volume of the member's own) or
// "name:/path". A volume at a path the registry package already mounts
// replaces that package's volume.
func (t *translator) memberVolume(svc *manifest.Service, o *convert.Obj, i int, v string, names convert.Names) {
	at := listAt(o, "volume", i)
	name, p, named := strings.Cut(v, ":")
	if !named {
		name, p = "", v
	}
	target, err := convert.CleanPath(p)
	if err != nil {
		t.d.Error(at, "expected \"/path\" or \"<name>:/path\": %v", err)
		return
	}
	vol := convert.Name(name)
	if !named {
		vol = names.Claim(svc.Name + "-data")
	}
	convert.AddVolume(t.m, vol)
	for j := range svc.Mounts {
		if svc.Mounts[j].Target == target {
			dropVolume(t.m, svc.Mounts[j].Volume)
			svc.Mounts[j].Volume = vol
			return
		}
	}
	svc.Mounts = append(svc.Mounts, manifest.Mount{Volume: vol, Target: target})
}

// dropVolume removes a volume declaration a replaced mount no longer uses.
func dropVolume(m *manifest.Manifest, name string) {
	for i, v := range m.Spec.Volumes {
		if v.Name == name {
			m.Spec.Volumes = append(m.Spec.Volumes[:i], m.Spec.Volumes[i+1:]...)
			return
		}
	}
}
