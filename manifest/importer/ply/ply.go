package ply

import (
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
	t := &translator{opts: opts, where: map[string]string{}, d: d, m: convert.New(), names: convert.Names{},
		members: map[string]*member{}, memberNames: map[string]string{}}
	t.vars = convert.Vars{D: d, Label: func(n string) string { return "the deploy-time value $" + n }}
	// A composition is the [[service]] array (or the legacy [[app]] one);
	// a header alone is still an app.
	key := ""
	switch {
	case convert.IsArrayOfTables(raw["service"]):
		key = "service"
	case convert.IsArrayOfTables(raw["app"]):
		key = "app"
	}
	header := root.Obj("package")
	headerKey := "package"
	if header == nil {
		if header = root.Obj("stack"); header != nil {
			headerKey = "stack"
		}
	}
	name := ""
	if header != nil {
		name, _ = header.Str("name")
	} else if key == "" {
		root.Error("package", "[package] is required")
	}
	t.m.Metadata.Name = convert.AppName(d, opts, headerKey+".name", name)
	if key != "" {
		if header != nil {
			header.Skip("version", "owner", "description", "license", "homepage")
			if f, ok := header.Str("env_file"); ok {
				header.Warn("env_file", "the env file %s is not read: each $VAR it fills becomes a Slipway variable, set for each environment", f)
			}
			header.Done()
		}
		t.composition(root.Objs(key))
	} else {
		t.app(root, header)
	}
	root.Done()
	t.vars.Declare(t.m)
	convert.Finalize(t.m, d, t.where, or(key, "package"))
	return t.m, d.List
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

type translator struct {
	opts  convert.Options
	where map[string]string // native service name -> source path
	d     *convert.Diags
	m     *manifest.Manifest
	names convert.Names
	vars  convert.Vars
	// members holds each composition member by its ply name.
	members     map[string]*member
	memberNames map[string]string // ply member name -> native service name
}

// app translates a single application: the grouped form ([package],
// [build], [run]) or the older flat one (run and build scalars under
// [package], every section at the top level). The two mix: a grouped file
// may keep some sections at the top level, and ply reads them there.
func (t *translator) app(root, pkg *convert.Obj) {
	name := t.m.Metadata.Name
	svc := manifest.Service{Name: t.names.Claim(name)}
	run := root.Obj("run")
	build := root.Obj("build")
	// scalars are the run settings; sections the run tables (ports, env…).
	scalars := []*convert.Obj{run, pkg}
	sections := []*convert.Obj{run, root}
	if pkg != nil {
		pkg.Skip("name", "version", "owner", "description", "license", "homepage")
	}
	svc.Source = manifest.Source{Type: manifest.SourceGit, Repository: convert.SelfRepository(t.d, t.opts, "package"), Build: &manifest.Build{Type: "docker"}}
	t.buildSettings(build, pkg, root)

	params := newNamespace()
	params.facts["host"] = param{value: svc.Name}
	if pkg != nil {
		if v, ok := pkg.Scalar("version"); ok {
			params.facts["version"] = param{value: convert.EscapeRefs(v)}
		}
	}
	params.facts["name"] = param{value: convert.EscapeRefs(name)}
	ports := t.ports(first(sections, "ports"))
	if len(ports) == 1 {
		for _, p := range ports {
			ps := strconv.FormatInt(p, 10)
			params.facts["port"] = param{value: ps}
			params.facts["addr"] = param{value: svc.Name + ":" + ps}
			params.facts["base_url"] = param{value: "http://" + svc.Name + ":" + ps}
		}
	} else {
		for _, f := range []string{"port", "addr", "base_url"} {
			params.missing[f] = "the app declares no single port in [ports]"
		}
	}
	paramsObj := first(sections, "params")
	if paramsObj != nil {
		t.params(&svc, paramsObj.Obj("params"), params)
	}
	if o := first(sections, "env"); o != nil {
		if e := o.Obj("env"); e != nil {
			for _, k := range e.Keys() {
				v, ok := e.Scalar(k)
				if !ok {
					continue
				}
				if paramsObj == nil {
					// Without a [params] table, braces are literal text.
					t.setEnv(&svc, e, k, convert.EscapeRefs(v))
					continue
				}
				x := expander{holes: true, lookup: func(ref string) (param, error) {
					if strings.Contains(ref, ".") {
						return param{}, unknownParam{ref}
					}
					return params.get(ref)
				}}
				p, err := x.expand(v)
				t.setParam(&svc, e, k, p, err)
			}
		}
	}
	t.runScalars(&svc, scalars)
	t.runSections(&svc, sections)
	for _, o := range []*convert.Obj{run, build, pkg} {
		if o != nil {
			o.Done()
		}
	}
	t.where[svc.Name] = "package"
	t.m.Spec.Services = append(t.m.Spec.Services, svc)
}

// first returns the first object holding key, marking it there.
func first(objs []*convert.Obj, key string) *convert.Obj {
	for _, o := range objs {
		if o != nil && o.Has(key) {
			return o
		}
	}
	return nil
}

// firstTable is the table at key of the first of objs that has key; nil
// when none has it or it is not a table (an error Obj records).
func firstTable(objs []*convert.Obj, key string) *convert.Obj {
	if o := first(objs, key); o != nil {
		return o.Obj(key)
	}
	return nil
}

// buildSettings reads what makes ply's image: the base and dependency
// packages (the one thing Slipway cannot do: it builds a Dockerfile), and
// the build inputs that only matter to ply's own build.
func (t *translator) buildSettings(build, pkg, root *convert.Obj) {
	const packaged = "ply assembles the image from packages; Slipway builds a Dockerfile or runs an image, so write a Dockerfile at the repository root that installs what this declared (the service builds ./Dockerfile)"
	found := false
	for _, o := range []*convert.Obj{build, pkg, root} {
		if o == nil {
			continue
		}
		for _, k := range []string{"base", "dependencies"} {
			if o.Unsupported(convert.SeverityError, k, packaged) {
				found = true
			}
		}
		// Build inputs of ply's own build, which the Dockerfile replaces.
		o.Skip("include", "requires", "sources", "provides_abi", "layer")
		if s, ok := o.Str("isolation"); ok && s != "ns" {
			o.Warn("isolation", "microVM isolation is not carried over: Slipway runs containers")
		}
	}
	if build != nil && build.Unsupported(convert.SeverityError, "command", "ply's build command runs in its builder image; Slipway builds a Dockerfile, so run this command in a Dockerfile at the repository root (the service builds ./Dockerfile)") {
		found = true
	}
	if !found {
		t.d.Warn("package", "the service is built from a Dockerfile at the root of this repository, which ply does not need: add one")
	}
}

func (t *translator) ports(o *convert.Obj) map[string]int64 {
	ports := map[string]int64{}
	if o == nil {
		return ports
	}
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

// params declares the app's own params: plain defaults, computed values
// (resolved when read) and secrets (generated per environment, or stored
// when external).
func (t *translator) params(svc *manifest.Service, p *convert.Obj, ns *namespace) {
	if p == nil {
		return
	}
	for _, k := range p.Keys() {
		if facts[k] || live[k] || k == "self" {
			p.Skip(k)
			p.Error(k, "%q is a built-in param and cannot be declared", k)
			continue
		}
		switch v := p.M[k].(type) {
		case string:
			p.Skip(k)
			if len(holeRefs(v)) > 0 {
				ns.computed[k] = v
				continue
			}
			ns.declared[k] = param{value: convert.EscapeRefs(unescapeBraces(v))}
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
			} else if len(t.m.Spec.Secrets) < manifest.MaxGeneratedSecrets {
				t.m.Spec.Secrets = append(t.m.Spec.Secrets, manifest.SecretDeclaration{Name: name, Generate: manifest.Generate{Type: manifest.GenerateRandom, Bytes: 16}})
			}
			ns.declared[k] = param{secret: name}
			// ply keeps a minted param as a file the app can read; so does Slipway.
			convert.MountSecret(svc, name, name)
		default:
			p.Skip(k)
			p.Error(k, "expected a string or { secret = true }, got %s", convert.TypeName(v))
		}
	}
	checkComputed(p, ns)
}

func unescapeBraces(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "{{", "{"), "}}", "}")
}

// setParam sets an environment value resolved from params, or reports why
// it cannot be.
func (t *translator) setParam(svc *manifest.Service, e *convert.Obj, k string, p param, err error) {
	if err != nil {
		e.Error(k, "%v", err)
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
	t.setEnv(svc, e, k, p.value)
}

func (t *translator) setEnv(svc *manifest.Service, e *convert.Obj, k, v string) {
	if !convert.ValidEnvKey(k) {
		e.Error(k, "%q is not a valid environment variable name", k)
		return
	}
	convert.SetEnv(svc, k, v)
}

// runScalars reads the run settings, from [run] in the grouped form and
// [package] in the flat one.
func (t *translator) runScalars(svc *manifest.Service, objs []*convert.Obj) {
	if o := first(objs, "entrypoint"); o != nil {
		switch v := o.M["entrypoint"].(type) {
		case string:
			o.Skip("entrypoint")
			svc.Command = []string{"/bin/sh", "-c", convert.EscapeRefs(strings.TrimSpace(v))}
			o.Warn("entrypoint", "a string entrypoint runs through /bin/sh -c, which the image must provide (scratch and distroless images have no shell)")
		default:
			if cmd, ok := o.Strings("entrypoint"); ok {
				svc.Command = convert.EscapeAll(cmd)
			}
		}
	}
	if o := first(objs, "user"); o != nil {
		o.Unsupported(convert.SeverityWarning, "user", "Slipway runs the image's own user: set USER in the Dockerfile")
	}
	if o := first(objs, "workdir"); o != nil {
		o.Unsupported(convert.SeverityWarning, "workdir", "Slipway has no working directory setting: set WORKDIR in the Dockerfile")
	}
	if o := first(objs, "stop_signal"); o != nil {
		if s, ok := o.Str("stop_signal"); ok {
			if n := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(s)), "SIG"); n != "TERM" {
				o.Warn("stop_signal", "Slipway stops services with SIGTERM; set STOPSIGNAL SIG%s in the Dockerfile", n)
			}
		}
	}
	if o := first(objs, "capabilities"); o != nil {
		o.Unsupported(convert.SeverityWarning, "capabilities", "capabilities are not carried over: Swarm gives containers Docker's default set")
	}
}

// runSections reads the run tables, from [run] or the top level.
func (t *translator) runSections(svc *manifest.Service, objs []*convert.Obj) {
	if v := firstTable(objs, "volumes"); v != nil {
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
	if n := firstTable(objs, "network"); n != nil {
		n.Skip(n.Keys()...)
		n.Warn("", "the egress claim is not carried over: Slipway does not restrict egress")
	}
	t.resources(svc, firstTable(objs, "resources"))
	if h := firstTable(objs, "health"); h != nil {
		h.Skip(h.Keys()...)
		if h.Has("port") {
			h.Warn("", "ply's health gate is a TCP connect, and Slipway has no TCP health check (only HTTP, or a command that would have to exist in the image); the service gets no health check")
		} else {
			h.Warn("", "ply's health gate (the process survives its grace period) is not carried over; the service gets no health check")
		}
	}
	if r := firstTable(objs, "restart"); r != nil {
		policy, _ := r.Str("policy")
		r.Skip("backoff", "max_backoff")
		r.Done()
		if policy == "" || policy == "never" {
			r.Warn("policy", "Swarm always restarts a stopped service task; ply's default of never restarting is not available")
		}
	}
	if s := firstTable(objs, "scale"); s != nil {
		s.Skip(s.Keys()...)
		if n, ok := convert.AsInt(s.M["min"]); ok && n >= 1 && n <= manifest.MaxReplicas && n != 1 {
			svc.Replicas = manifest.NewInt(n)
		}
		s.Warn("", "autoscaling is not carried over: the service runs min replicas (at least 1; idle sleep is not available)")
	}
	if o := first(objs, "requests"); o != nil {
		o.Unsupported(convert.SeverityWarning, "requests", "host links (bind mounts an operator grants with --grant-links) are not carried over: Slipway manifests mount named volumes only")
	}
	for _, o := range objs {
		if o != nil {
			o.Skip("ports", "params", "env")
		}
	}
}

func (t *translator) resources(svc *manifest.Service, r *convert.Obj) {
	if r == nil {
		return
	}
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
			if n, err := convert.CPUMillis(s, false); err != nil || n > manifest.MaxCPUMillis {
				r.Error("cpu", "%v", err)
			} else {
				res.CPUMillis = manifest.NewInt(n)
			}
		}
	}
	r.Unsupported(convert.SeverityWarning, "pids", "Slipway does not limit process counts")
	r.Unsupported(convert.SeverityWarning, "swap", "Slipway does not limit swap separately")
	r.Unsupported(convert.SeverityWarning, "cpu_weight", "Slipway sets CPU limits, not relative weights")
	r.Done()
	if res.CPUMillis != nil || res.MemoryBytes != nil {
		svc.Resources = res
	}
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
