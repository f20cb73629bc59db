package ply

import (
	neturl "net/url"
	"path"
	"regexp"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer/internal/convert"
	"github.com/slipwayhq/slipway/manifest/importer/internal/lines"
)

// Import translates a ply.toml.
func Import(data []byte, opts convert.Options) (*manifest.Manifest, []convert.Diagnostic) {
	d := &convert.Diags{Lines: lines.TOML(data).Lookup}
	var raw map[string]any
	if err := toml.Unmarshal(data, &raw); err != nil {
		d.Error("", "not valid TOML: %v", err)
		return nil, d.List
	}
	root := convert.NewObj(d, "", raw)
	t := &translator{opts: opts, where: map[string]string{}, d: d, m: convert.New(), names: convert.Names{}, members: map[string]member{}, memberNames: map[string]string{}}
	_, composition := raw["service"]
	_, legacy := raw["app"]
	header := root.Obj("package")
	if header == nil {
		header = root.Obj("stack")
	}
	name := ""
	if header != nil {
		name, _ = header.Str("name")
	} else {
		root.Error("package", "[package] is required")
	}
	t.m.Metadata.Name = convert.AppName(d, opts, "package.name", name)
	if composition || legacy {
		if header != nil {
			header.Skip("version", "owner", "description", "license", "homepage")
			header.Done()
		}
		key := "service"
		if legacy && !composition {
			key = "app"
		}
		t.composition(root.Objs(key))
	} else {
		t.app(root, header)
	}
	root.Done()
	convert.Finalize(t.m, d, t.where, "service")
	return t.m, d.List
}

type translator struct {
	opts  convert.Options
	where map[string]string // native service name -> source path
	d     *convert.Diags
	m     *manifest.Manifest
	names convert.Names
	// members holds each composition member's params by its ply name.
	members     map[string]member
	memberNames map[string]string // ply member name -> native service name
}

// app translates a single application, grouped or flat.
func (t *translator) app(root, pkg *convert.Obj) {
	name := t.m.Metadata.Name
	svc := manifest.Service{Name: t.names.Claim(name)}
	// The flat form keeps base/entrypoint (and the other run scalars) under
	// [package] and every section at the top level.
	scalars, sections, build := pkg, root, root
	if run := root.Obj("run"); run != nil {
		scalars, sections = run, run
	}
	if b := root.Obj("build"); b != nil {
		build = b
	}
	if pkg != nil {
		pkg.Skip("name", "version", "owner", "description", "license", "homepage")
	}
	svc.Source = manifest.Source{Type: manifest.SourceGit, Repository: convert.SelfRepository(t.d, t.opts, "package"), Build: &manifest.Build{Type: "docker"}}
	packaged := false
	for _, o := range []*convert.Obj{build, pkg} {
		if o == nil {
			continue
		}
		for _, k := range []string{"base", "dependencies"} {
			if o.Unsupported(convert.SeverityError, k, "ply assembles the image from packages; Slipway builds a Dockerfile or runs an image, so write a Dockerfile at the repository root that installs what this declared (the service builds ./Dockerfile)") {
				packaged = true
			}
		}
	}
	if build != root {
		build.Skip("include", "requires", "sources")
		build.Done()
	} else {
		root.Skip("include", "requires", "sources")
	}
	if !packaged {
		t.d.Warn("package", "the service is built from a Dockerfile at the root of this repository, which ply does not need: add one")
	}

	params := map[string]param{"name": {value: name}}
	if pkg != nil {
		if v, ok := pkg.Str("version"); ok {
			params["version"] = param{value: v}
		}
	}
	ports := t.ports(sections)
	if len(ports) == 1 {
		for _, p := range ports {
			ps := strconv.FormatInt(p, 10)
			params["port"] = param{value: ps}
			params["addr"] = param{value: svc.Name + ":" + ps}
			params["base_url"] = param{value: "http://" + svc.Name + ":" + ps}
		}
	}
	params["host"] = param{value: svc.Name}
	hasParams := sections.Has("params")
	if p := sections.Obj("params"); p != nil {
		t.params(&svc, p, params)
	}
	if e := sections.Obj("env"); e != nil {
		for _, k := range e.Keys() {
			v, ok := e.Scalar(k)
			if !ok {
				continue
			}
			if hasParams {
				t.setResolved(&svc, e, k, v, func(ref string) (param, bool) { p, ok := params[ref]; return p, ok })
			} else {
				t.setEnv(&svc, e, k, convert.EscapeRefs(v))
			}
		}
	}
	if scalars != nil {
		t.runScalars(&svc, scalars)
	}
	t.runSections(&svc, sections, ports)
	if scalars != nil && scalars != sections {
		scalars.Done()
	}
	if sections != root {
		sections.Done()
	}
	if pkg != nil {
		pkg.Done()
	}
	t.where[svc.Name] = "package"
	t.m.Spec.Services = append(t.m.Spec.Services, svc)
}

func (t *translator) ports(o *convert.Obj) map[string]int64 {
	ports := map[string]int64{}
	p := o.Obj("ports")
	if p == nil {
		return ports
	}
	for _, k := range p.Keys() {
		if n, ok := p.Int(k); ok {
			if n < 1 || n > 65535 {
				p.Error(k, "%d is outside 1-65535", n)
				continue
			}
			ports[k] = n
		}
	}
	return ports
}

// params declares the app's own params: plain defaults, computed values and
// secrets (generated per environment, or stored when external).
func (t *translator) params(svc *manifest.Service, p *convert.Obj, scope map[string]param) {
	var computed []string
	for _, k := range p.Keys() {
		switch v := p.M[k].(type) {
		case string:
			p.Skip(k)
			if strings.Contains(strings.ReplaceAll(v, "{{", ""), "{") {
				computed = append(computed, k)
				continue
			}
			scope[k] = param{value: unescapeBraces(v)}
		case map[string]any:
			o := p.Obj(k)
			secret, _ := o.Bool("secret")
			external, _ := o.Bool("external")
			o.Done()
			if !secret {
				o.Error("", "a table param must be { secret = true }")
				continue
			}
			name := convert.Name(k)
			if external {
				o.Warn("", "external secret %q is a stored Slipway secret: set its value with slipway app secret before deploying", name)
			} else if len(t.m.Spec.Secrets) < 64 {
				t.m.Spec.Secrets = append(t.m.Spec.Secrets, manifest.SecretDeclaration{Name: name, Generate: manifest.Generate{Type: manifest.GenerateRandom, Bytes: 16}})
			}
			scope[k] = param{secret: name}
			// ply keeps a minted param as a file the app can read; so does Slipway.
			convert.MountSecret(svc, name, name)
		default:
			p.Skip(k)
			p.Error(k, "expected a string or { secret = true }, got %s", convert.TypeName(v))
		}
	}
	// Computed params may reference each other in any order.
	settle := computedParams(p, computed, scope)
	for _, k := range computed {
		if !settle(k) {
			p.Error(k, "the computed param reads an unknown name, a live value, or itself")
		}
	}
}

// Where a computed param is on its way into scope.
const (
	paramPending = iota + 1
	paramResolving
	paramFailed
)

// computedParams returns settle, which resolves the computed param k into
// scope, first resolving the computed params it reads, and reports whether
// it could. Each param is resolved once, so the work grows with the number
// of holes, whatever the order or depth of the references; one met again
// while it is being resolved is a cycle and fails, as does one reading an
// unknown name. A failed name still reads what scope had before.
func computedParams(p *convert.Obj, computed []string, scope map[string]param) (settle func(k string) bool) {
	state := make(map[string]int, len(computed))
	for _, k := range computed {
		state[k] = paramPending
	}
	lookup := func(ref string) (param, bool) {
		if _, ok := state[ref]; ok {
			settle(ref)
		}
		x, ok := scope[ref]
		return x, ok
	}
	settle = func(k string) bool {
		switch state[k] {
		case paramResolving, paramFailed:
			return false
		case paramPending:
			state[k] = paramResolving
			v, err := resolve(p.M[k].(string), lookup)
			if err != nil {
				state[k] = paramFailed
				return false
			}
			scope[k] = v
			delete(state, k)
		}
		return true
	}
	return settle
}

var holeRE = regexp.MustCompile(`\{([A-Za-z0-9_.-]+)\}`)

type unresolved struct{ name string }

func (u unresolved) Error() string { return "unknown param " + u.name }

type secretInside struct{ name string }

func (s secretInside) Error() string { return "secret param " + s.name + " inside a longer value" }

// resolve fills {name} holes. A value that is exactly one secret param
// resolves to that secret; a secret inside longer text cannot be expressed.
func resolve(s string, lookup func(string) (param, bool)) (param, error) {
	const lb, rb = "\x00lb\x00", "\x00rb\x00"
	work := strings.ReplaceAll(strings.ReplaceAll(s, "{{", lb), "}}", rb)
	if m := holeRE.FindStringSubmatch(work); m != nil && m[0] == work {
		p, ok := lookup(m[1])
		if !ok {
			return param{}, unresolved{m[1]}
		}
		return p, nil
	}
	var err error
	out := holeRE.ReplaceAllStringFunc(work, func(h string) string {
		name := h[1 : len(h)-1]
		p, ok := lookup(name)
		switch {
		case !ok:
			err = unresolved{name}
		case p.secret != "":
			err = secretInside{name}
		}
		return p.value
	})
	if err != nil {
		return param{}, err
	}
	out = strings.ReplaceAll(strings.ReplaceAll(out, lb, "{"), rb, "}")
	return param{value: out}, nil
}

func unescapeBraces(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "{{", "{"), "}}", "}")
}

// setResolved sets an env var whose value may hold {param} holes.
func (t *translator) setResolved(svc *manifest.Service, e *convert.Obj, k, v string, lookup func(string) (param, bool)) {
	p, err := resolve(v, lookup)
	switch err.(type) {
	case nil:
	case unresolved:
		e.Error(k, "%v: no such param (or it is a live value, which cannot be baked into env)", err)
		return
	case secretInside:
		e.Error(k, "%v: Slipway never puts secrets in the environment, so a secret cannot be part of a longer value; read it from its file instead", err)
		return
	}
	if p.secret != "" {
		if !convert.ValidEnvKey(k) {
			e.Error(k, "%q is not a valid environment variable name", k)
			return
		}
		target := convert.MountSecret(svc, p.secret, p.secret)
		convert.SetEnv(svc, k+"_FILE", target)
		e.Warn(k, "Slipway never puts secrets in the environment: the secret is the file %s, named by %s_FILE instead of %s (images such as postgres read *_FILE; others must be adapted)", target, k, k)
		return
	}
	t.setEnv(svc, e, k, convert.EscapeRefs(p.value))
}

func (t *translator) setEnv(svc *manifest.Service, e *convert.Obj, k, v string) {
	if !convert.ValidEnvKey(k) {
		e.Error(k, "%q is not a valid environment variable name", k)
		return
	}
	convert.SetEnv(svc, k, v)
}

func (t *translator) runScalars(svc *manifest.Service, o *convert.Obj) {
	switch v := o.M["entrypoint"].(type) {
	case nil:
	case string:
		o.Skip("entrypoint")
		svc.Command = []string{"/bin/sh", "-c", convert.EscapeRefs(v)}
		o.Warn("entrypoint", "a string entrypoint runs through /bin/sh -c, which the image must provide (scratch and distroless images have no shell)")
	default:
		if cmd, ok := o.Strings("entrypoint"); ok {
			svc.Command = convert.EscapeAll(cmd)
		}
	}
	o.Unsupported(convert.SeverityWarning, "user", "Slipway runs the image's own user: set USER in the Dockerfile")
	o.Unsupported(convert.SeverityWarning, "workdir", "Slipway has no working directory setting: set WORKDIR in the Dockerfile")
	if s, ok := o.Str("stop_signal"); ok {
		if n := strings.TrimPrefix(strings.ToUpper(s), "SIG"); n != "TERM" {
			o.Warn("stop_signal", "Slipway stops services with SIGTERM; set STOPSIGNAL %s in the Dockerfile", s)
		}
	}
	o.Unsupported(convert.SeverityWarning, "capabilities", "capabilities are not carried over: Swarm gives containers Docker's default set")
}

func (t *translator) runSections(svc *manifest.Service, o *convert.Obj, ports map[string]int64) {
	if v := o.Obj("volumes"); v != nil {
		for _, k := range v.Keys() {
			var p string
			switch x := v.M[k].(type) {
			case string:
				v.Skip(k)
				p = x
			case map[string]any:
				vo := v.Obj(k)
				p, _ = vo.Str("path")
				if s, ok := vo.Str("scope"); ok && s == "shared" {
					vo.Warn("scope", "Slipway volumes belong to one environment and are not shared across instances of other stacks")
				}
				if e, _ := vo.Bool("ephemeral"); e {
					vo.Warn("ephemeral", "the volume is kept like any other Slipway volume; nothing collects it")
				}
				vo.Done()
			default:
				v.Skip(k)
				v.Error(k, "expected a path or { path, scope, ephemeral }")
				continue
			}
			target, err := convert.CleanPath(p)
			if err != nil {
				v.Error(k, "%v", err)
				continue
			}
			vol := convert.Name(svc.Name + "-" + k)
			convert.AddVolume(t.m, vol)
			svc.Mounts = append(svc.Mounts, manifest.Mount{Volume: vol, Target: target})
		}
	}
	if n := o.Obj("network"); n != nil {
		n.Skip(n.Keys()...)
		n.Warn("", "the egress claim is not carried over: Slipway does not restrict egress")
	}
	if r := o.Obj("resources"); r != nil {
		res := &manifest.Resources{}
		if v, ok := r.Raw("mem"); ok {
			if s, ok := limitOf(r, "mem", v); ok {
				if n, err := convert.Bytes(s, convert.CgroupBytes); err != nil {
					r.Error("mem", "%v", err)
				} else {
					res.MemoryBytes = manifest.NewInt(n)
				}
			}
		}
		if v, ok := r.Raw("cpu"); ok {
			if s, ok := limitOf(r, "cpu", v); ok {
				if n, err := convert.CPUMillis(s, false); err != nil || n > 1048576 {
					r.Error("cpu", "%v", err)
				} else {
					res.CPUMillis = manifest.NewInt(n)
				}
			}
		}
		r.Unsupported(convert.SeverityWarning, "pids", "Slipway does not limit process counts")
		r.Done()
		if res.CPUMillis != nil || res.MemoryBytes != nil {
			svc.Resources = res
		}
	}
	if h := o.Obj("health"); h != nil {
		h.Skip(h.Keys()...)
		h.Warn("", "ply's health gate is a TCP connect, and Slipway has no TCP health check (only HTTP, or a command that would have to exist in the image); the service gets no health check")
	}
	if r := o.Obj("restart"); r != nil {
		policy, _ := r.Str("policy")
		r.Skip("backoff", "max_backoff")
		r.Done()
		if policy == "" || policy == "never" {
			r.Warn("policy", "Swarm always restarts a stopped service task; ply's default of never restarting is not available")
		}
	}
	if s := o.Obj("scale"); s != nil {
		s.Skip(s.Keys()...)
		if n, ok := convert.AsInt(s.M["min"]); ok && n >= 1 && n <= 100 && n != 1 {
			svc.Replicas = manifest.NewInt(n)
		}
		s.Warn("", "autoscaling is not carried over: the service runs min replicas (at least 1; idle sleep is not available)")
	}
	o.Unsupported(convert.SeverityWarning, "requests", "host links are not carried over: Slipway manifests mount named volumes only")
	o.Skip("ports")
}

// limitOf reads a fixed value or the max of a { min, max } range.
func limitOf(r *convert.Obj, key string, v any) (string, bool) {
	if m, ok := v.(map[string]any); ok {
		max, ok := convert.ScalarText(m["max"])
		if !ok {
			r.Error(key, "a range needs max")
			return "", false
		}
		r.Warn(key, "live resizing between min and max is not carried over: max is the fixed limit")
		return max, true
	}
	s, ok := convert.ScalarText(v)
	if !ok {
		r.Error(key, "expected a value or { min, max }")
	}
	return s, ok
}

var tagRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// composition translates [[service]] members into services of one app.
func (t *translator) composition(members []*convert.Obj) {
	// Pass 1: names and what each member provides, so env can read any
	// member's params whatever the order.
	type pending struct {
		o    *convert.Obj
		name string
	}
	var list []pending
	for _, o := range members {
		run, _ := o.Str("run")
		plyName, hasName := o.Str("name")
		if !hasName {
			plyName = defaultName(run)
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
		overrides := map[string]string{}
		if p := o.Obj("params"); p != nil {
			for _, k := range p.Keys() {
				if v, ok := p.Str(k); ok {
					overrides[k] = v
				}
			}
		}
		mem, ok := t.member(o, run, native, overrides)
		if !ok {
			o.Skip(o.Keys()...)
			continue
		}
		for k, v := range overrides {
			if _, known := mem.params[k]; !known {
				mem.params[k] = param{value: v}
			}
		}
		t.members[plyName] = mem
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
	// Pass 2: env, dependencies, routes, on the final slice.
	for _, p := range list {
		idx := -1
		for i := range t.m.Spec.Services {
			if t.m.Spec.Services[i].Name == t.memberNames[p.name] {
				idx = i
			}
		}
		svc := &t.m.Spec.Services[idx]
		t.memberRest(svc, p.o, p.name)
	}
}

func defaultName(run string) string {
	switch {
	case strings.HasPrefix(run, "git+"):
		return strings.TrimSuffix(path.Base(strings.SplitN(strings.TrimPrefix(run, "git+"), "#", 2)[0]), ".git")
	case strings.HasPrefix(run, "./") || strings.HasPrefix(run, "../") || run == ".":
		return path.Base(path.Clean(run))
	}
	name, _, _ := strings.Cut(run, "@")
	return name
}

// member resolves what run = names: a registry package, a git repository or
// a local directory.
func (t *translator) member(o *convert.Obj, run, native string, overrides map[string]string) (member, bool) {
	switch {
	case run == "":
		o.Error("run", "a member needs run = \"<package>@<version>\", \"./dir\" or \"git+https://…\"")
		return member{}, false
	case strings.HasPrefix(run, "git+"):
		url, ref, _ := strings.Cut(strings.TrimPrefix(run, "git+"), "#")
		if !cloneable(url) {
			o.Error("run", "%q is not a git URL Slipway can clone (http(s), ssh, git or file, with a host and no password)", run)
			return member{}, false
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
			return member{}, false
		}
		o.Warn("run", "the repository is built with Docker: it needs a Dockerfile at its root (ply builds it from its own ply.toml instead), and its ply.toml settings (ports, env, params) are not read")
		return t.gitMember(native, manifest.Source{Type: manifest.SourceGit, Repository: repo, Build: &manifest.Build{Type: "docker"}}), true
	case strings.HasPrefix(run, "./") || strings.HasPrefix(run, "../") || run == ".":
		dir := path.Clean(run)
		if strings.HasPrefix(dir, "..") {
			o.Error("run", "%q leaves the repository; Slipway builds from the manifest's own repository", run)
			return member{}, false
		}
		b := &manifest.Build{Type: "docker"}
		if dir != "." {
			b.Context, b.Dockerfile = dir, path.Join(dir, "Dockerfile")
		}
		o.Warn("run", "the directory is built with Docker from %s (ply builds it from its own ply.toml instead), and its ply.toml settings (ports, env, params) are not read", path.Join(dir, "Dockerfile"))
		return t.gitMember(native, manifest.Source{Type: manifest.SourceGit, Repository: convert.SelfRepository(t.d, t.opts, o.At("run")), Build: b}), true
	}
	pkg, version, _ := strings.Cut(run, "@")
	build, known := registry[pkg]
	if !known {
		o.Error("run", "registry package %q has no Slipway translation (known: postgres, redis, valkey); replace it with an image", pkg)
		return member{}, false
	}
	if !tagRE.MatchString(version) {
		o.Error("run", "%q needs an exact version Slipway can use as the image tag, such as %s@17", run, pkg)
		return member{}, false
	}
	m := build(native, version, overrides)
	o.Warn("run", "ply's %s package becomes the official image %s; settings baked into the ply package may differ", pkg, m.services[0].Source.Image)
	return m, true
}

var branchRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}$`)

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

func (t *translator) gitMember(native string, src manifest.Source) member {
	return member{
		services: []manifest.Service{{Name: native, Source: src}},
		params:   map[string]param{"host": {value: native}},
	}
}

func (t *translator) memberRest(svc *manifest.Service, o *convert.Obj, plyName string) {
	o.Skip("run", "name", "params")
	mem := t.members[plyName]
	lookup := func(ref string) (param, bool) {
		app, name, qualified := strings.Cut(ref, ".")
		if !qualified {
			p, ok := mem.params[ref]
			return p, ok
		}
		other, ok := t.members[app]
		if !ok {
			return param{}, false
		}
		p, ok := other.params[name]
		return p, ok
	}
	if e := o.Obj("env"); e != nil {
		for _, k := range e.Keys() {
			if v, ok := e.Scalar(k); ok {
				t.setResolved(svc, e, k, v, lookup)
			}
		}
	}
	if after, ok := o.Strings("after"); ok {
		for _, a := range after {
			dep, _, _ := strings.Cut(a, ":") // "db:healthy" style conditions
			native, known := t.memberNames[dep]
			if !known {
				o.Error("after", "%q is not a member of this composition", a)
				continue
			}
			svc.DependsOn = append(svc.DependsOn, native)
		}
	}
	port := mem.port
	if pub, ok := o.Raw("publish"); ok {
		text, _ := convert.ScalarText(pub)
		if _, container, found := strings.Cut(text, ":"); found {
			if n, err := strconv.ParseInt(container, 10, 64); err == nil && n >= 1 && n <= 65535 {
				port = n
			}
		} else if n, err := strconv.ParseInt(text, 10, 64); err == nil && n >= 1 && n <= 65535 && port == 0 {
			port = n
		}
		o.Warn("publish", "Slipway does not publish host ports; other services reach it on the application network, and the public reach it through a route (domain)")
	}
	if domain, ok := o.Str("domain"); ok {
		host, err := convert.CheckHostname(domain, false)
		switch {
		case err != nil:
			o.Error("domain", "%v", err)
		case port == 0:
			o.Error("domain", "the route needs the member's container port, which is in its own ply.toml; add publish = \"<host>:<container>\" or write the route by hand")
		default:
			t.m.Spec.Routes = append(t.m.Spec.Routes, manifest.Route{Hostname: host, Service: svc.Name, Port: int(port), Visibility: manifest.VisibilityPublic})
		}
	}
	if v, ok := o.Str("volume"); ok {
		name, p, hasName := strings.Cut(v, ":")
		if !hasName {
			name, p = "data", v
		}
		target, err := convert.CleanPath(p)
		if err != nil {
			o.Error("volume", "expected \"<name>:/path\": %v", err)
		} else {
			vol := convert.Name(svc.Name + "-" + name)
			convert.AddVolume(t.m, vol)
			svc.Mounts = append(svc.Mounts, manifest.Mount{Volume: vol, Target: target})
		}
	}
	if s, ok := o.Raw("scale"); ok {
		if n, isInt := convert.AsInt(s); isInt && n >= 1 && n <= 100 {
			if n != 1 {
				svc.Replicas = manifest.NewInt(n)
			}
		} else if m, isMap := s.(map[string]any); isMap {
			if n, ok := convert.AsInt(m["min"]); ok && n >= 1 && n <= 100 && n != 1 {
				svc.Replicas = manifest.NewInt(n)
			}
			o.Warn("scale", "autoscaling is not carried over: the service runs min replicas (at least 1)")
		} else {
			o.Error("scale", "expected a replica count from 1 to 100 or { min, max }")
		}
	}
	o.Unsupported(convert.SeverityWarning, "egress", "egress enforcement is not carried over: Slipway does not restrict egress")
	o.Done()
}
