package skali

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer/internal/convert"
	"github.com/slipwayhq/slipway/manifest/importer/internal/lines"
)

// Import translates a skali.yaml manifest.
func Import(data []byte, opts convert.Options) (*manifest.Manifest, []convert.Diagnostic) {
	d := &convert.Diags{Lines: lines.YAML(data).Lookup}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		d.Error("", "not valid YAML: %s", firstLine(err.Error()))
		return nil, d.List
	}
	if raw == nil {
		d.Error("", "the file is empty")
		return nil, d.List
	}
	root := convert.NewObj(d, "", raw)
	t := &translator{opts: opts, where: map[string]string{}, d: d, m: convert.New(), names: convert.Names{}, apps: map[string]string{}, dbs: map[string]*convert.Postgres{}}
	t.vars = convert.Vars{D: d, What: "project value"}
	name, _ := root.Str("name")
	t.m.Metadata.Name = convert.AppName(d, opts, "name", name)
	root.Skip("description")
	// Keys older skali releases wrote and later removed (manifest change
	// revisions 1, 4 and 5): skali manifest upgrade drops them.
	root.Unsupported(convert.SeverityWarning, "version", "obsolete key: skali removed the manifest version (skali manifest upgrade drops it); it was ignored")
	root.Unsupported(convert.SeverityWarning, "skali", "obsolete key: skali removed its release watermark (skali manifest upgrade drops it); it was ignored")
	root.Unsupported(convert.SeverityWarning, "backups", "backup policies are not carried over: Slipway does not back up databases, buckets or volumes (skali itself moved backups out of the manifest)")

	apps := root.Obj("applications")
	if apps != nil {
		for _, k := range apps.Keys() {
			t.apps[k] = t.names.Claim(k)
		}
	}
	if dbs := root.Obj("databases"); dbs != nil {
		for _, k := range dbs.Keys() {
			if o := dbs.Obj(k); o != nil {
				t.database(k, o)
			}
		}
	}
	if buckets := root.Obj("buckets"); buckets != nil {
		for _, k := range buckets.Keys() {
			buckets.Skip(k)
			buckets.Error(k, "bucket %q has no Slipway equivalent: Slipway provides no S3 storage; run an S3-compatible store as a service or use an external one", k)
		}
	}
	if apps != nil {
		for _, k := range apps.Keys() {
			if o := apps.Obj(k); o != nil {
				t.application(k, o)
			}
		}
	}
	root.Done()
	t.vars.Declare(t.m)
	convert.Finalize(t.m, d, t.where, "applications")
	return t.m, d.List
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

type translator struct {
	opts  convert.Options
	where map[string]string // native service name -> source path
	d     *convert.Diags
	m     *manifest.Manifest
	names convert.Names
	apps  map[string]string // application key -> native service name
	dbs   map[string]*convert.Postgres
	// vars holds every project value referenced, with its inline default.
	vars convert.Vars
}

func (t *translator) database(key string, o *convert.Obj) {
	engine, _ := o.Str("engine")
	version, hasVersion := o.Scalar("version")
	if engine != "postgres" {
		o.Error("engine", "only postgres databases are supported, got %q", engine)
	}
	if !hasVersion || (version != "17" && version != "18") {
		o.Error("version", "a postgres database needs version 17 or 18")
	}
	o.Obj("storage")
	isolation, _ := o.Str("isolation")
	availability, _ := o.Str("availability")
	exts, _ := o.Strings("extensions")
	o.Obj("recovery")
	o.Done()
	if engine != "postgres" || (version != "17" && version != "18") {
		return
	}
	name := t.names.Claim(key)
	pg := convert.NewPostgres(name, version, convert.Name(key), convert.Name(key))
	t.dbs[key] = &pg
	t.where[name] = o.Path
	t.m.Spec.Services = append(t.m.Spec.Services, pg.Service)
	convert.AddVolume(t.m, pg.Volume.Name)
	t.m.Spec.Secrets = append(t.m.Spec.Secrets, pg.Secret)
	var lost []string
	if isolation != "" && isolation != "shared" {
		lost = append(lost, "isolation "+isolation)
	}
	if availability != "" && availability != "single" {
		lost = append(lost, "availability "+availability+" (it is one container)")
	}
	if len(exts) > 0 {
		lost = append(lost, "extensions "+extensionsNote(exts))
	}
	msg := fmt.Sprintf("database %q becomes the service %q running postgres:%s on the volume %q with a generated superuser password; it accepts connections without a password from this application's private network (only its services reach it), storage size and backups are not managed", key, name, version, pg.Volume.Name)
	if len(lost) > 0 {
		msg += "; not carried over: " + strings.Join(lost, "; ")
	}
	o.Warn("", "%s", msg)
}

// extensionsNote says what becomes of declared extensions: the official
// image ships PostgreSQL's contrib modules, but not pgvector.
func extensionsNote(exts []string) string {
	var contrib, vector []string
	for _, e := range exts {
		if e == "vector" {
			vector = append(vector, e)
		} else {
			contrib = append(contrib, e)
		}
	}
	var notes []string
	if len(contrib) > 0 {
		notes = append(notes, strings.Join(contrib, ", ")+" (the official image ships them: run CREATE EXTENSION yourself)")
	}
	if len(vector) > 0 {
		notes = append(notes, "vector (the official image has no pgvector: use an image that includes it, such as pgvector/pgvector, and run CREATE EXTENSION yourself)")
	}
	return strings.Join(notes, ", ")
}

func (t *translator) application(key string, o *convert.Obj) {
	name := t.apps[key]
	if name != key {
		o.Warn("", "application name %q normalized to %q", key, name)
	}
	svc := manifest.Service{Name: name}
	image, hasImage := o.Str("image")
	build := o.Obj("build")
	switch {
	case hasImage && build != nil:
		o.Error("image", "exactly one of image or build is allowed")
		build.Skip(build.Keys()...)
		o.Skip(o.Keys()...)
		return
	case hasImage:
		ref, err := convert.CheckImage(image)
		if err != nil {
			o.Error("image", "%v; the application was not carried over", err)
			o.Skip(o.Keys()...)
			return
		}
		svc.Source = manifest.Source{Type: manifest.SourceImage, Image: ref}
	case build != nil:
		src, ok := t.build(build)
		if !ok {
			o.Skip(o.Keys()...)
			return
		}
		svc.Source = src
	default:
		o.Error("", "an application needs image or build; it was not carried over")
		o.Skip(o.Keys()...)
		return
	}
	o.Skip("description")
	o.Unsupported(convert.SeverityWarning, "platforms", "platform restrictions are not carried over: Swarm runs the image on its nodes' platform")
	o.Unsupported(convert.SeverityWarning, "commands", "named host-side commands (skali dev run) are not carried over: run them yourself")
	o.Unsupported(convert.SeverityWarning, "dev", "local dev mode (skali dev) is not carried over")
	if cmd, ok := o.Strings("command"); ok && len(cmd) > 0 {
		svc.Command = convert.EscapeAll(cmd)
	}
	if env := o.Obj("environment"); env != nil {
		t.environment(&svc, env)
	}
	ports := map[string]int64{}
	if p := o.Obj("ports"); p != nil {
		for _, pn := range p.Keys() {
			po := p.Obj(pn)
			if po == nil {
				continue
			}
			n, ok := po.Int("port")
			if !ok || n < 1 || n > 65535 {
				po.Error("port", "a port needs a number in 1-65535")
			} else {
				ports[pn] = n
			}
			if proto, ok := po.Str("protocol"); ok && proto != "http" && proto != "tcp" && proto != "udp" && proto != "https" {
				po.Error("protocol", "%q is not http, https, tcp or udp", proto)
			}
			po.Done()
		}
	}
	if routes := o.Obj("routes"); routes != nil {
		for _, rn := range routes.Keys() {
			if r := routes.Obj(rn); r != nil {
				t.route(name, rn, r, ports)
			}
		}
	}
	if h := o.Obj("health"); h != nil {
		svc.Healthcheck = t.health(h, ports)
	}
	if r := o.Obj("resources"); r != nil {
		svc.Resources = resources(r)
	}
	volumes := false
	if v := o.Obj("volumes"); v != nil {
		for _, vn := range v.Keys() {
			vo := v.Obj(vn)
			if vo == nil {
				continue
			}
			mp, _ := vo.Str("mountPath")
			if size, ok := vo.Str("size"); ok {
				if _, err := convert.Bytes(size, convert.SkaliBytes); err != nil {
					vo.Error("size", "%v", err)
				} else {
					vo.Warn("size", "Slipway volumes are local Docker volumes without a size; %s was dropped", size)
				}
			}
			vo.Done()
			target, err := convert.CleanPath(mp)
			if err != nil {
				vo.Error("mountPath", "%v", err)
				continue
			}
			volName := convert.Name(name + "-" + vn)
			convert.AddVolume(t.m, volName)
			svc.Mounts = append(svc.Mounts, manifest.Mount{Volume: volName, Target: target})
			volumes = true
		}
	}
	if s := o.Obj("scaling"); s != nil {
		t.scaling(&svc, s)
	}
	if p := o.Obj("placement"); p != nil {
		p.Skip(p.Keys()...)
		p.Warn("", "placement spreading is not carried over: Swarm places replicas itself")
	}
	if sh := o.Obj("shutdown"); sh != nil {
		if g, ok := sh.Str("gracePeriod"); ok {
			if _, err := convert.Seconds(g); err != nil {
				sh.Error("gracePeriod", "%v", err)
			} else {
				sh.Warn("gracePeriod", "Slipway has no stop grace setting; Docker's default of 10 seconds applies instead of %s", g)
			}
		}
		sh.Done()
	}
	if dep := o.Obj("deployment"); dep != nil {
		t.deployment(&svc, dep, volumes)
	} else if volumes {
		svc.Rollout = &manifest.Rollout{Order: manifest.RolloutStopFirst}
	}
	o.Done()
	t.where[name] = o.Path
	t.m.Spec.Services = append(t.m.Spec.Services, svc)
}

func (t *translator) build(b *convert.Obj) (manifest.Source, bool) {
	ctx, ok := b.Str("context")
	dockerfile, hasDockerfile := b.Str("dockerfile")
	target, _ := b.Str("target")
	build := &manifest.Build{Type: "docker"}
	if target != "" {
		if stageRE.MatchString(target) {
			build.Target = target
		} else {
			b.Error("target", "%q is not a Dockerfile stage name", target)
		}
	}
	if args := b.Obj("arguments"); args != nil {
		for _, k := range args.Keys() {
			v, ok := args.Scalar(k)
			if !ok {
				continue
			}
			if !convert.ValidEnvKey(k) {
				args.Error(k, "%q is not a valid build argument name", k)
				continue
			}
			if build.Args == nil {
				build.Args = map[string]string{}
			}
			build.Args[k] = convert.EscapeRefs(v)
		}
	}
	b.Done()
	clean := path.Clean("/" + ctx)
	if !ok || ctx == "" || path.IsAbs(ctx) || strings.HasPrefix(path.Clean(ctx), "..") {
		b.Error("context", "a build needs a context relative to the project root")
		return manifest.Source{}, false
	}
	rel := strings.TrimPrefix(clean, "/")
	if rel != "" {
		build.Context = rel
	}
	if !hasDockerfile {
		dockerfile = "Dockerfile"
	}
	// skali resolves dockerfile against the context; Slipway against the
	// repository root.
	df := path.Clean(path.Join(rel, dockerfile))
	if strings.HasPrefix(df, "..") || path.IsAbs(dockerfile) {
		b.Error("dockerfile", "the Dockerfile must stay inside the project")
		return manifest.Source{}, false
	}
	if df != "Dockerfile" {
		build.Dockerfile = df
	}
	return manifest.Source{Type: manifest.SourceGit, Repository: convert.SelfRepository(t.d, t.opts, b.Path), Build: build}, true
}

var (
	stageRE     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,127}$`)
	outputRE    = regexp.MustCompile(`^\{\{\s*(databases|buckets)\.([a-z][a-z0-9-]*)\.([a-z_]+)\s*\}\}$`)
	valueNameRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
)

func (t *translator) environment(svc *manifest.Service, env *convert.Obj) {
	for _, k := range env.Keys() {
		v, ok := env.Scalar(k)
		if !ok {
			continue
		}
		if !convert.ValidEnvKey(k) {
			env.Error(k, "%q is not a valid environment variable name", k)
			continue
		}
		if strings.Contains(v, "{{") {
			t.output(svc, env, k, v)
			continue
		}
		out, ok := t.expr(env.At(k), v)
		if !ok {
			continue
		}
		if out != convert.EscapeRefs(v) {
			env.Warn(k, "skali stores project values encrypted; Slipway variables are plain configuration shown in plans, so mount secrets as stored secret files instead")
		}
		convert.SetEnv(svc, k, out)
	}
}

// output rewrites a {{databases.<k>.<output>}} value.
func (t *translator) output(svc *manifest.Service, env *convert.Obj, key, v string) {
	m := outputRE.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		env.Error(key, "a service output must be the whole value, such as {{databases.data.url}}")
		return
	}
	if m[1] == "buckets" {
		env.Error(key, "bucket %q outputs have no Slipway equivalent (buckets are not carried over)", m[2])
		return
	}
	pg := t.dbs[m[2]]
	if pg == nil {
		env.Error(key, "database %q is not declared (or was not carried over)", m[2])
		return
	}
	svc.DependsOn = append(svc.DependsOn, pg.Service.Name)
	switch m[3] {
	case "host":
		convert.SetEnv(svc, key, pg.Service.Name)
	case "port":
		convert.SetEnv(svc, key, strconv.Itoa(convert.PostgresPort))
	case "name":
		convert.SetEnv(svc, key, pg.DB)
	case "username":
		convert.SetEnv(svc, key, pg.User)
	case "url":
		convert.SetEnv(svc, key, pg.URL())
		env.Warn(key, "the URL carries no password: the generated database trusts this application's private network")
	case "password":
		mount := pg.PasswordMount()
		target := convert.MountSecret(svc, mount.Name, mount.Name)
		convert.SetEnv(svc, key+"_FILE", target)
		env.Warn(key, "Slipway never puts secrets in the environment: the password is the file %s, named by %s_FILE instead of %s", target, key, key)
	default:
		env.Error(key, "%q is not a database output (host, port, name, username, password, url)", m[3])
	}
}

// expr turns ${NAME} and ${NAME:-default} into ${{ vars.NAME }} references and
// records each project value with its default.
func (t *translator) expr(at, s string) (string, bool) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(convert.EscapeRefs(s))
			return b.String(), true
		}
		b.WriteString(convert.EscapeRefs(s[:i]))
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			t.d.Error(at, "malformed ${ expression: missing }")
			return "", false
		}
		inner := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(inner, ":-")
		if !valueNameRE.MatchString(name) || len(name) > 63 {
			t.d.Error(at, "%q is not a project value name (A-Z, 0-9 and _)", name)
			return "", false
		}
		var d *string
		if hasDef {
			d = &def
		}
		b.WriteString(t.vars.Ref(at, name, d))
		s = s[i+end+1:]
	}
}

func (t *translator) route(service, name string, r *convert.Obj, ports map[string]int64) {
	domain, _ := r.Str("domain")
	host, ok := t.expr(r.At("domain"), domain)
	if !ok {
		r.Skip(r.Keys()...)
		return
	}
	host, err := convert.CheckHostname(host, false)
	if err != nil || host == "" {
		r.Error("domain", "a route needs a hostname: %v", err)
		r.Skip(r.Keys()...)
		return
	}
	if p, ok := r.Str("path"); ok && path.Clean(p) != "/" {
		r.Error("path", "Slipway routes whole hostnames; the path prefix %q has no equivalent (serve it from one service or route it inside the application)", p)
	}
	port, ok := resolvePort(r, "port", ports)
	if !ok {
		r.Skip(r.Keys()...)
		return
	}
	scheme := "https"
	switch tls, _ := r.Str("tls"); tls {
	case "", "automatic":
	case "optional":
		r.Warn("tls", "Slipway's ingress serves public routes over HTTPS; plain HTTP without a redirect (tls: optional) is not kept")
	case "disabled":
		r.Warn("tls", "Slipway's ingress serves public routes over HTTPS with a managed certificate; plain-HTTP-only serving is not available")
		scheme = "http"
	default:
		r.Error("tls", "%q is not automatic, optional or disabled", tls)
	}
	if s, ok := r.Str("strategy"); ok && s == "least-requests" {
		r.Warn("strategy", "Slipway's ingress balances replicas itself; least-requests is not carried over")
	}
	r.Skip("compress")
	aliases, _ := r.Strings("aliases")
	r.Done()
	routeName := convert.Name(service + "-" + name)
	t.m.Spec.Routes = append(t.m.Spec.Routes, manifest.Route{Name: routeName, Hostname: host, Service: service, Port: int(port), Visibility: manifest.VisibilityPublic})
	for i, a := range aliases {
		at := convert.Index(r.At("aliases"), i)
		ah, ok := t.expr(at, a)
		if !ok {
			continue
		}
		ah, err := convert.CheckHostname(ah, false)
		if err != nil || ah == host {
			t.d.Error(at, "an alias needs a hostname other than the route's domain")
			continue
		}
		t.m.Spec.Routes = append(t.m.Spec.Routes, manifest.Route{
			Hostname:   ah,
			Visibility: manifest.VisibilityPublic,
			Redirect:   &manifest.Redirect{To: scheme + "://" + host, Status: 308},
		})
	}
}

func resolvePort(o *convert.Obj, key string, ports map[string]int64) (int64, bool) {
	v, ok := o.Raw(key)
	if !ok {
		o.Error(key, "a port is required")
		return 0, false
	}
	if s, isStr := v.(string); isStr {
		if n, named := ports[s]; named {
			return n, true
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 1 && n <= 65535 {
			return n, true
		}
		o.Error(key, "%q is not a port of this application", s)
		return 0, false
	}
	if n, isInt := convert.AsInt(v); isInt && n >= 1 && n <= 65535 {
		return n, true
	}
	o.Error(key, "expected a port name or a number in 1-65535")
	return 0, false
}

type probe struct {
	port, interval, timeout, threshold int64
	path                               string
}

func readProbe(o *convert.Obj, ports map[string]int64, interval int64) (probe, bool) {
	p := probe{interval: interval, timeout: 2, threshold: 3}
	ok := true
	if h := o.Obj("http"); h != nil {
		p.port, ok = resolvePort(h, "port", ports)
		p.path, _ = h.Str("path")
		h.Done()
		if err := convert.CheckHTTPPath(p.path); err != nil {
			h.Error("path", "%v", err)
			ok = false
		}
	} else {
		o.Error("http", "a probe needs an http check")
		ok = false
	}
	for key, dst := range map[string]*int64{"interval": &p.interval, "timeout": &p.timeout} {
		if s, has := o.Str(key); has {
			n, err := convert.Seconds(s)
			if err != nil || n < 1 || n > 3600 {
				o.Error(key, "not a duration from 1s to 1h: %v", err)
				ok = false
				continue
			}
			*dst = n
		}
	}
	if n, has := o.Int("failureThreshold"); has {
		if n < 1 {
			o.Error("failureThreshold", "use a positive value")
			ok = false
		}
		p.threshold = n
	}
	o.Done()
	return p, ok
}

// health maps readiness (else liveness, else startup) onto Slipway's one
// check; a startup probe's budget becomes the start period.
func (t *translator) health(h *convert.Obj, ports map[string]int64) *manifest.Healthcheck {
	var (
		chosen *probe
		start  int64
	)
	if s := h.Obj("startup"); s != nil {
		if p, ok := readProbe(s, ports, 2); ok {
			start = min(p.interval*p.threshold, 3600)
			chosen = &p
		}
	}
	if l := h.Obj("liveness"); l != nil {
		if p, ok := readProbe(l, ports, 30); ok {
			if h.Has("readiness") {
				l.Warn("", "Slipway has one health check, taken from readiness; a failing check also restarts the task, so the separate liveness probe was not carried over")
			} else {
				chosen = &p
				l.Warn("", "Slipway has one health check; the liveness probe becomes it")
			}
		}
	}
	if r := h.Obj("readiness"); r != nil {
		if p, ok := readProbe(r, ports, 10); ok {
			chosen = &p
		}
	}
	h.Done()
	if chosen == nil {
		return nil
	}
	if chosen.timeout > chosen.interval {
		h.Warn("", "Slipway's check timeout cannot exceed its interval; the timeout is %ds", chosen.interval)
	}
	hc := &manifest.Healthcheck{
		Type:            manifest.HealthcheckHTTP,
		Port:            manifest.NewInt(chosen.port),
		Path:            chosen.path,
		IntervalSeconds: manifest.NewInt(chosen.interval),
		TimeoutSeconds:  manifest.NewInt(min(chosen.timeout, chosen.interval)),
		Retries:         manifest.NewInt(min(chosen.threshold, 100)),
	}
	if start > 0 {
		hc.StartPeriodSeconds = manifest.NewInt(start)
	}
	return hc
}

func resources(r *convert.Obj) *manifest.Resources {
	res := &manifest.Resources{}
	if l := r.Obj("limits"); l != nil {
		if v, ok := l.Raw("cpu"); ok {
			if n, err := convert.CPUMillis(v, false); err != nil || n > 1048576 {
				l.Error("cpu", "%v", err)
			} else {
				res.CPUMillis = manifest.NewInt(n)
			}
		}
		if v, ok := l.Str("memory"); ok {
			if n, err := convert.Bytes(v, convert.SkaliBytes); err != nil {
				l.Error("memory", "%v", err)
			} else {
				res.MemoryBytes = manifest.NewInt(n)
			}
		}
		l.Unsupported(convert.SeverityWarning, "temporaryStorage", "Slipway does not limit the writable container filesystem; the limit was dropped")
		l.Done()
	}
	if q := r.Obj("requests"); q != nil {
		q.Skip(q.Keys()...)
		q.Warn("", "Slipway sets limits only; requests (scheduler reservations) were dropped")
	}
	r.Done()
	if res.CPUMillis == nil && res.MemoryBytes == nil {
		return nil
	}
	return res
}

func (t *translator) scaling(svc *manifest.Service, s *convert.Obj) {
	if r := s.Obj("replicas"); r != nil {
		if n, ok := r.Int("min"); ok {
			if n < 1 || n > 100 {
				r.Error("min", "%d is outside 1-100", n)
			} else if n != 1 {
				svc.Replicas = manifest.NewInt(n)
			}
		}
		if max, ok := r.Int("max"); ok && (svc.Replicas == nil || max > svc.Replicas.N) {
			r.Warn("max", "autoscaling is not carried over: the service runs its minimum replica count")
		}
		r.Done()
	}
	if a := s.Obj("autoscaling"); a != nil {
		a.Skip(a.Keys()...)
	}
	s.Done()
}

func (t *translator) deployment(svc *manifest.Service, d *convert.Obj, volumes bool) {
	if rc := d.Obj("releaseCommand"); rc != nil {
		cmd, _ := rc.Strings("command")
		job := manifest.Job{Name: convert.Name(svc.Name + "-release"), Service: svc.Name, Command: convert.EscapeAll(cmd), Run: manifest.JobRunBeforeRollout, TimeoutSeconds: manifest.NewInt(600)}
		if s, ok := rc.Str("timeout"); ok {
			n, err := convert.Seconds(s)
			if err != nil || n < 1 || n > 86400 {
				rc.Error("timeout", "not a duration from 1s to 1d: %v", err)
			} else {
				job.TimeoutSeconds = manifest.NewInt(n)
			}
		}
		rc.Done()
		if len(cmd) > 0 && len(t.m.Spec.Jobs) < 16 {
			t.m.Spec.Jobs = append(t.m.Spec.Jobs, job)
		}
	}
	order := ""
	if r := d.Obj("rollout"); r != nil {
		switch s, _ := r.Str("strategy"); s {
		case "recreate":
			order = manifest.RolloutStopFirst
		case "rolling":
			order = manifest.RolloutStartFirst
		case "blue-green", "":
			if s == "blue-green" || !volumes {
				order = manifest.RolloutStartFirst
			}
			if s == "blue-green" {
				r.Warn("strategy", "Slipway has no blue-green rollout: replicas are replaced one at a time, new before old (start-first), so both versions serve briefly")
			}
		default:
			r.Error("strategy", "%q is not blue-green, rolling or recreate", s)
		}
		r.Skip("maxUnavailable", "maxSurge")
		if _, ok := r.Str("timeout"); ok {
			r.Warn("timeout", "the rollout deadline is the daemon's convergence timeout in Slipway; it was not carried over")
		}
		r.Done()
	}
	if volumes {
		if order == manifest.RolloutStartFirst {
			d.Warn("rollout", "skali forces recreate rollouts for applications with volumes; the service keeps stop-first")
		}
		order = manifest.RolloutStopFirst
	}
	if order != "" {
		svc.Rollout = &manifest.Rollout{Order: order}
	}
	d.Done()
}
