package gordon

import (
	"slices"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer/internal/convert"
	"github.com/slipwayhq/slipway/manifest/importer/internal/lines"
)

// Import translates a gordon app manifest.
func Import(data []byte, opts convert.Options) (*manifest.Manifest, []convert.Diagnostic) {
	d := &convert.Diags{Lines: lines.TOML(data).Lookup}
	var raw map[string]any
	if err := toml.Unmarshal(data, &raw); err != nil {
		d.Error("", "not valid TOML: %v", err)
		return nil, d.List
	}
	root := convert.NewObj(d, "", raw)
	t := &translator{where: map[string]string{}, d: d, m: convert.New(), names: convert.Names{}, volumes: convert.Names{}}
	name, _ := root.Str("name")
	t.m.Metadata.Name = convert.AppName(d, opts, "name", name)
	appEnv := map[string]string{}
	if env := root.Obj("env"); env != nil {
		for _, k := range env.Keys() {
			if v, ok := env.Str(k); ok {
				appEnv[k] = v
			}
		}
	}
	switch {
	case convert.IsArrayOfTables(raw["service"]):
		t.alpha(root, "service", appEnv)
	case convert.IsArrayOfTables(raw["services"]):
		t.alpha(root, "services", appEnv)
	default:
		if services := root.Obj("services"); services != nil {
			for _, key := range services.Keys() {
				if svc := services.Obj(key); svc != nil {
					t.service(key, svc, appEnv)
				}
			}
		} else {
			d.Error("services", "the app declares no [services.<name>] table")
		}
	}
	root.Unsupported(convert.SeverityWarning, "network", "shared networks ([[network.shared]]) are not carried over: services of other Slipway applications are reached through links ([[spec.exports]] / [[spec.imports]])")
	root.Unsupported(convert.SeverityWarning, "telemetry", "log export settings are not carried over: Slipway keeps service logs itself")
	root.Done()
	convert.Finalize(t.m, d, t.where, "services")
	return t.m, d.List
}

// alpha translates the v3 alpha shape: [[service]] (or [[services]])
// entries naming themselves with a name key, with [service.*] sub-tables.
// Current gordon releases refuse it, but the fields mean what they mean in
// the keyed form, so it translates the same way.
func (t *translator) alpha(root *convert.Obj, key string, appEnv map[string]string) {
	root.Warn(key, "the v3 alpha [[%s]] form (a name key per entry) is refused by current gordon releases, which use keyed [services.<name>] tables; it was translated as that form", key)
	for _, o := range root.Objs(key) {
		name, ok := o.Str("name")
		if !ok || name == "" {
			o.Error("name", "a [[%s]] entry needs a name; it was not carried over", key)
			o.Skip(o.Keys()...)
			o.Done()
			continue
		}
		t.service(name, o, appEnv)
	}
}

type translator struct {
	where   map[string]string // native service name -> source path
	d       *convert.Diags
	m       *manifest.Manifest
	names   convert.Names
	volumes convert.Names
}

func (t *translator) service(key string, o *convert.Obj, appEnv map[string]string) {
	name := t.names.Claim(key)
	if name != key {
		o.Warn("", "service name %q normalized to %q (Slipway names are lowercase letters, digits and hyphens); other services reach it as %s", key, name, name)
	}
	svc := manifest.Service{Name: name}
	image, ok := o.Str("image")
	if !ok {
		o.Error("image", "a service needs an image; the service was not carried over")
		return
	}
	ref, err := convert.CheckImage(image)
	if err != nil {
		o.Error("image", "%v; the service was not carried over", err)
		return
	}
	svc.Source = manifest.Source{Type: manifest.SourceImage, Image: ref}
	// gordon runs on Docker, where "command" replaces the image's CMD and
	// keeps its ENTRYPOINT: that is Slipway's arguments.
	if cmd, ok := o.Strings("command"); ok {
		svc.Arguments = convert.EscapeAll(cmd)
	}
	if grace, ok := o.Str("stop_grace"); ok {
		if _, err := convert.Seconds(grace); err != nil {
			o.Error("stop_grace", "%v", err)
		} else {
			o.Warn("stop_grace", "Slipway has no stop grace setting; Docker's default of 10 seconds applies instead of %s", grace)
		}
	}
	// Readiness without a port probes the service's only TCP-capable
	// interface; read them before the TCP ones are reported.
	ifacePorts := interfacePorts(o)
	o.Unsupported(convert.SeverityError, "devices", "device grants (CDI devices) have no Slipway equivalent")
	o.Unsupported(convert.SeverityError, "rcon", "RCON interfaces are TCP publishing, which has no Slipway equivalent: Slipway's ingress serves HTTP routes only")
	o.Unsupported(convert.SeverityError, "tcp", "TCP publishing has no Slipway equivalent: Slipway's ingress serves HTTP routes only")
	o.Unsupported(convert.SeverityError, "udp", "UDP publishing has no Slipway equivalent: Slipway's ingress serves HTTP routes only")
	o.Unsupported(convert.SeverityError, "bind", "operator binds ([app_mounts] host locations) have no Slipway equivalent: manifests mount named volumes only")
	o.Unsupported(convert.SeverityWarning, "telemetry", "log export settings are not carried over: Slipway keeps service logs itself")

	env := map[string]string{}
	for k, v := range appEnv {
		env[k] = v
	}
	if e := o.Obj("env"); e != nil {
		for _, k := range e.Keys() {
			if v, ok := e.Str(k); ok {
				env[k] = v
			}
		}
	}
	for _, k := range convert.SortedKeys(env) {
		if !convert.ValidEnvKey(k) {
			t.d.Error(convert.Join(o.At("env"), k), "%q is not a valid environment variable name", k)
			continue
		}
		convert.SetEnv(&svc, k, convert.EscapeRefs(env[k]))
	}
	if s := o.Obj("secrets"); s != nil {
		t.secrets(&svc, s)
	}
	volumed := false
	for _, v := range o.Objs("volume") {
		if t.volume(&svc, v) {
			volumed = true
		}
	}
	if volumed {
		// gordon replaces every volume-backed service sequentially, read-only
		// volumes included; Slipway derives start-first for read-only mounts.
		svc.Rollout = &manifest.Rollout{Order: manifest.RolloutStopFirst}
	}
	var routes []manifest.Route
	for _, h := range o.Objs("http") {
		if r := t.http(name, h); r != nil {
			routes = append(routes, *r)
		}
	}
	if r := o.Obj("readiness"); r != nil {
		svc.Healthcheck = t.readiness(r, ifacePorts)
	}
	t.backups(&svc, o)
	o.Done()
	t.where[name] = o.Path
	t.m.Spec.Services = append(t.m.Spec.Services, svc)
	t.m.Spec.Routes = append(t.m.Spec.Routes, routes...)
}

func (t *translator) secrets(svc *manifest.Service, o *convert.Obj) {
	for _, env := range o.Keys() {
		path := o.At(env)
		var secretName, as string
		switch v := o.M[env].(type) {
		case string:
			o.Skip(env)
			secretName, as = v, "env"
		case map[string]any:
			e := o.Obj(env)
			secretName, _ = e.Str("name")
			as = "env"
			if a, ok := e.Str("as"); ok {
				as = a
			}
			e.Done()
		default:
			o.Error(env, "expected a secret name or { name, as }, got %s", convert.TypeName(v))
			continue
		}
		if secretName == "" || !convert.ValidEnvKey(env) {
			t.d.Error(path, "a secret entry needs a valid variable name and a secret name")
			continue
		}
		stored := convert.Name(secretName)
		switch as {
		case "file":
			target := convert.MountSecret(svc, stored, convert.SecretFileName(env))
			convert.SetEnv(svc, env+"_FILE", target)
			if stored != secretName {
				t.d.Warn(path, "secret %q is stored in Slipway as %q; set its value with slipway app secret", secretName, stored)
			} else {
				t.d.Warn(path, "secret %q is a stored Slipway secret: set its value with slipway app secret before deploying", stored)
			}
		case "env":
			target := convert.MountSecret(svc, stored, convert.SecretFileName(env))
			t.d.Warn(path, "Slipway never puts secrets in the environment: stored secret %q is mounted as the file %s instead of the variable %s, so the application must read it from that file; set its value with slipway app secret before deploying", stored, target, env)
		default:
			t.d.Error(convert.Join(path, "as"), "%q is neither env nor file", as)
		}
	}
}

func (t *translator) volume(svc *manifest.Service, o *convert.Obj) bool {
	name, _ := o.Str("name")
	path, _ := o.Str("path")
	readOnly, _ := o.Bool("readonly")
	o.Done()
	target, err := convert.CleanPath(path)
	if name == "" || err != nil {
		o.Error("", "a volume needs a name and an absolute path; it was not carried over")
		return false
	}
	volName := convert.Name(name)
	if volName != name {
		o.Warn("name", "volume name %q normalized to %q", name, volName)
	}
	convert.AddVolume(t.m, volName)
	svc.Mounts = append(svc.Mounts, manifest.Mount{Volume: volName, Target: target, ReadOnly: readOnly})
	return true
}

// http translates one HTTP interface. Public interfaces become routes;
// internal ones need nothing, since services reach each other on any port.
func (t *translator) http(service string, o *convert.Obj) *manifest.Route {
	visibility, _ := o.Str("visibility")
	port, hasPort := o.Int("port")
	host, hasHost := o.Str("host")
	tls, hasTLS := o.Str("tls")
	o.Done()
	if !hasPort || port < 1 || port > 65535 {
		o.Error("port", "an HTTP interface needs a port in 1-65535")
		return nil
	}
	switch visibility {
	case "internal":
		if hasHost || hasTLS {
			o.Error("", "an internal interface takes no host or tls")
		}
		return nil
	case "", "public":
	default:
		o.Error("visibility", "%q is neither public nor internal", visibility)
		return nil
	}
	hostname, err := convert.CheckHostname(host, false)
	if !hasHost || err != nil {
		o.Error("host", "a public interface needs a valid hostname: %v", err)
		return nil
	}
	switch tls {
	case "", "auto", "always":
	case "never":
		o.Warn("tls", "Slipway's ingress serves every public route over HTTPS with a managed certificate; plaintext-only serving (tls = never) is not available")
	default:
		o.Error("tls", "%q is not auto, always or never", tls)
	}
	return &manifest.Route{Hostname: hostname, Service: service, Port: int(port), Visibility: manifest.VisibilityPublic}
}

// interfacePorts lists the container ports of a service's TCP-capable
// interfaces (HTTP, public or internal, TCP and RCON), as gordon counts them
// to pick the port a readiness check without one probes.
func interfacePorts(o *convert.Obj) []int64 {
	var ports []int64
	for _, key := range []string{"http", "tcp", "rcon"} {
		var entries []any
		switch v := o.M[key].(type) {
		case []any:
			entries = v
		case map[string]any:
			entries = []any{v}
		}
		for _, e := range entries {
			m, _ := e.(map[string]any)
			n, _ := convert.AsInt(m["port"])
			ports = append(ports, n)
		}
	}
	return ports
}

func (t *translator) readiness(o *convert.Obj, ifacePorts []int64) *manifest.Healthcheck {
	typ, _ := o.Str("type")
	path, hasPath := o.Str("path")
	port, hasPort := o.Int("port")
	timeout, hasTimeout := o.Str("timeout")
	o.Unsupported(convert.SeverityWarning, "contains", "Slipway's HTTP check passes on any 2xx or 3xx status and does not match the response body")
	o.Done()
	switch typ {
	case "", "none":
		return nil
	case "tcp":
		o.Warn("type", "Slipway has no TCP health check (only HTTP, or a command that would have to exist in the image); the service gets no health check, so rollouts do not wait for the port to accept connections")
		return nil
	case "log":
		o.Warn("type", "log readiness has no Slipway equivalent; the service gets no health check")
		return nil
	case "http":
	default:
		o.Error("type", "%q is not a readiness type (http, tcp, log or none)", typ)
		return nil
	}
	if !hasPort {
		// gordon probes the one TCP-capable interface a service declares,
		// and asks for readiness.port only when there are several.
		switch len(ifacePorts) {
		case 0:
			o.Error("port", "an http readiness check needs a port, and the service declares no HTTP or TCP interface to take it from")
			return nil
		case 1:
			port, hasPort = ifacePorts[0], true
		default:
			o.Error("port", "the service declares %d TCP-capable interfaces, so an http readiness check needs the port it probes (gordon requires it too)", len(ifacePorts))
			return nil
		}
	}
	if port < 1 || port > 65535 {
		o.Error("port", "an http readiness check needs a port in 1-65535")
		return nil
	}
	if !hasPath {
		path = "/"
	}
	if err := convert.CheckHTTPPath(path); err != nil {
		o.Error("path", "%v", err)
		return nil
	}
	h := &manifest.Healthcheck{Type: manifest.HealthcheckHTTP, Port: manifest.NewInt(port), Path: path}
	if hasTimeout {
		secs, err := convert.Seconds(timeout)
		switch {
		case err != nil:
			o.Error("timeout", "%v", err)
		case secs > 3600:
			o.Warn("timeout", "gordon's readiness budget becomes Slipway's start period, capped at 3600 seconds")
			h.StartPeriodSeconds = manifest.NewInt(3600)
		default:
			// gordon waits up to timeout for the first success; failures during
			// Slipway's start period do not count, which is the closest match.
			h.StartPeriodSeconds = manifest.NewInt(secs)
		}
	}
	return h
}

// gordonSchedules are gordon's backup schedules as Slipway's.
var gordonSchedules = map[string]string{"hourly": "@hourly", "daily": "@daily", "weekly": "@weekly", "monthly": "@monthly"}

// backups translates a service's database declarations and backup targets:
// a declared Postgres database makes the service a Slipway Postgres
// service (one database each), and each target listed in [backup] becomes
// a spec.backups entry, a database with its own schedule, a volume daily.
func (t *translator) backups(svc *manifest.Service, o *convert.Obj) {
	schedules := map[string]string{}
	for _, db := range o.Objs("database") {
		name, _ := db.Str("name")
		typ, _ := db.Str("type")
		sched, _ := db.Str("schedule")
		db.Done()
		switch {
		case typ != "postgres":
			db.Error("type", "only PostgreSQL databases are supported, got %q", typ)
			continue
		case name == "":
			db.Error("name", "a database needs a name; it was not carried over")
			continue
		case svc.Postgres != nil:
			db.Warn("", "Slipway backs up one database per Postgres service; database %q is not backed up (back up %s's volume instead)", name, svc.Name)
			continue
		}
		svc.Postgres = &manifest.Postgres{Database: name}
		db.Warn("", "database %q is dumped with pg_dump as the role postgres without a password; set [spec.services.postgres] user and password_secret if the server needs them", name)
		spec, ok := gordonSchedules[sched]
		if !ok {
			db.Error("schedule", "%q is not hourly, daily, weekly or monthly", sched)
			continue
		}
		schedules[name] = spec
	}
	b := o.Obj("backup")
	if b == nil {
		return
	}
	dbs, _ := b.Strings("postgres")
	vols, _ := b.Strings("volume")
	b.Done()
	for _, db := range dbs {
		spec, ok := schedules[db]
		if !ok || svc.Postgres == nil || svc.Postgres.Database != db {
			b.Error("postgres", "database %q is not a declared Postgres database of this service that Slipway backs up", db)
			continue
		}
		t.m.Spec.Backups = append(t.m.Spec.Backups, manifest.Backup{Name: convert.Name(svc.Name + "-" + db), Service: svc.Name, Schedule: spec})
	}
	for _, v := range vols {
		name := convert.Name(v)
		if !slices.ContainsFunc(svc.Mounts, func(m manifest.Mount) bool { return m.Volume == name }) {
			b.Error("volume", "volume %q is not mounted by this service", v)
			continue
		}
		b.Warn("volume", "gordon gives volume backups no schedule; volume %q is backed up daily (@daily, UTC), keeping 7", v)
		t.m.Spec.Backups = append(t.m.Spec.Backups, manifest.Backup{Name: convert.Name(svc.Name + "-" + name), Volume: name, Schedule: "@daily"})
	}
}
