package hakopod

import (
	"fmt"
	"regexp"
	"strings"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer/internal/convert"
	"github.com/slipwayhq/slipway/manifest/importer/internal/lines"
)

// profile is one row of hakopod's size table. Slipway has limits only, so
// the limits are carried over and the requests are not.
type profile struct{ cpuLimit, memLimit int64 }

const mi = 1 << 20

var profiles = map[string]profile{
	"small":   {600, 308 * mi},
	"medium":  {1200, 615 * mi},
	"large":   {2400, 1229 * mi},
	"compute": {4800, 4916 * mi},
	"gpu":     {8000, 16 << 30},
}

// Import translates a hakopod schema v1 application.
func Import(data []byte, opts convert.Options) (*manifest.Manifest, []convert.Diagnostic) {
	d := &convert.Diags{Lines: lines.TOML(data).Lookup}
	var raw map[string]any
	if err := toml.Unmarshal(data, &raw); err != nil {
		d.Error("", "not valid TOML: %v", err)
		return nil, d.List
	}
	// hakopod decodes into Go structs whose zero values mean "unset", and
	// its full exports write every field out (aws_identity = '', port = 0,
	// certificate_mounts = []): those are not features in use. Environment
	// maps keep their empty values, and network_access its empty lists (from =
	// [] denies peers): those are real.
	convert.PruneZero(raw, map[string]bool{"env": true, "network_access": true})
	root := convert.NewObj(d, "", raw)
	// A missing schema_version means 1, as hakopod reads it.
	if v, ok := root.Int("schema_version"); ok && v != 1 {
		root.Error("schema_version", "only schema_version = 1 is supported, got %d", v)
	}
	t := &translator{where: map[string]string{}, d: d, m: convert.New(), names: convert.Names{}, svcNames: map[string]string{}, jobs: map[string]bool{}}
	t.vars = convert.Vars{D: d, What: "hakopod template value"}
	name, _ := root.Str("name")
	t.m.Metadata.Name = convert.AppName(d, opts, "name", name)

	inject, _ := root.Bool("inject_env")
	appEnv := map[string]envValue{}
	if env := root.Obj("env"); env != nil {
		for _, k := range env.Keys() {
			if v, ok := env.Scalar(k); ok {
				appEnv[k] = envValue{v, env.At(k)}
			}
		}
		if !inject && len(appEnv) > 0 {
			env.Warn("", "[env] is not passed to services because inject_env is not true, so it was not carried over")
			appEnv = nil
		}
	}
	root.Unsupported(convert.SeverityWarning, "recovery", "the failed-deployment recovery policy is not carried over: set each environment's rollback (automatic or manual) in Slipway")
	root.Unsupported(convert.SeverityError, "env_file", "env files are expanded by hakopod's CLI at import time; inline the values (or the secret references) into [env] first")
	shared := root.Obj("secrets")
	if vols := root.Obj("volumes"); vols != nil {
		for _, k := range vols.Keys() {
			v := vols.Obj(k)
			if v == nil {
				continue
			}
			n := convert.Name(k)
			if n != k {
				v.Warn("", "volume name %q normalized to %q", k, n)
			}
			t.volumes = append(t.volumes, n)
			for _, f := range []string{"size_gib", "storage_class", "access_mode"} {
				v.Unsupported(convert.SeverityWarning, f, "Slipway volumes are local Docker volumes without a size, storage class or access mode; the setting was dropped")
			}
			v.Done()
		}
	}
	if nets := root.Obj("networks"); nets != nil {
		nets.Skip(nets.Keys()...)
		// The implicit default network, written out with no settings, is
		// what every Slipway application has.
		if def, _ := nets.M["default"].(map[string]any); len(nets.M) > 1 || len(def) > 0 || (len(nets.M) == 1 && def == nil) {
			nets.Warn("", "named networks and their policies are not carried over: all services of a Slipway application share one private network")
		}
	}

	if dm, ok := raw["domains"].(map[string]any); ok {
		t.domainTargets = map[string]bool{}
		for _, v := range dm {
			if s, ok := v.(string); ok {
				t.domainTargets[s] = true
			}
		}
	}
	services := root.Obj("services")
	if services == nil {
		root.Error("services", "the application declares no services")
	} else {
		// Claim every name first so depends_on and [domains] can refer ahead.
		for _, k := range services.Keys() {
			t.svcNames[k] = t.names.Claim(k)
			if t.svcNames[k] != k {
				services.Warn(k, "service name %q normalized to %q", k, t.svcNames[k])
			}
			if sm, ok := services.M[k].(map[string]any); ok {
				if _, isJob := sm["job"]; isJob {
					t.jobs[t.svcNames[k]] = true
				}
			}
		}
		for _, k := range services.Keys() {
			if o := services.Obj(k); o != nil {
				t.service(k, o, appEnv, shared)
			}
		}
	}
	if shared != nil {
		shared.Done()
	}
	if domains := root.Obj("domains"); domains != nil {
		for _, host := range domains.Keys() {
			target, ok := domains.Str(host)
			if !ok {
				continue
			}
			t.domain(domains, host, target)
		}
	}
	root.Done()
	for _, v := range t.volumes {
		convert.AddVolume(t.m, v)
	}
	t.vars.Declare(t.m)
	convert.Finalize(t.m, d, t.where, "services")
	return t.m, d.List
}

type translator struct {
	where    map[string]string // native service name -> source path
	d        *convert.Diags
	m        *manifest.Manifest
	names    convert.Names
	svcNames map[string]string // source key -> native name
	jobs     map[string]bool   // native names of job services
	ports    map[string]int64  // native name -> main port
	public   map[string]bool
	volumes  []string
	// domainTargets are the source keys [domains] maps hostnames to.
	domainTargets map[string]bool
	// vars are the template values ({{config.*}}, the site host) the
	// environment values use.
	vars convert.Vars
}

// envValue is an environment value with the source path it came from.
type envValue struct{ value, at string }

func (t *translator) service(key string, o *convert.Obj, appEnv map[string]envValue, shared *convert.Obj) {
	name := t.svcNames[key]
	svc := manifest.Service{Name: name}
	image, ok := o.Str("image")
	ref, err := convert.CheckImage(image)
	if !ok || err != nil {
		o.Error("image", "a service needs a valid image (%v); the service was not carried over", err)
		o.Skip(o.Keys()...)
		return
	}
	svc.Source = manifest.Source{Type: manifest.SourceImage, Image: ref}

	for _, f := range []struct{ key, msg string }{
		{"public_tcp", "public TCP listeners have no Slipway equivalent: the ingress serves HTTP routes only"},
		{"gpu", "GPUs have no Slipway equivalent"},
		{"serverless", "scale-to-zero serverless services have no Slipway equivalent"},
		{"kubernetes", "Kubernetes patches have no Slipway equivalent: Slipway runs on Docker Swarm"},
		{"aws_identity", "AWS workload identity has no Slipway equivalent"},
		{"container_daemon", "container daemon bindings have no Slipway equivalent"},
		{"certificate_mounts", "certificate mounts have no Slipway equivalent; mount the certificate as a stored secret file"},
		{"bindings", "derived URL bindings have no Slipway equivalent; write the URLs into env (services reach each other as http://<service>:<port>)"},
		{"http", "named HTTP endpoints have no Slipway equivalent; declare one route per hostname"},
		{"custom_hostnames", "tenant custom hostnames have no Slipway equivalent; a wildcard route may serve them"},
		{"sidecars", "sidecar containers have no Slipway equivalent; declare them as services of the application"},
		{"session", "sandbox sessions have no Slipway equivalent"},
		{"working_dir", "Slipway has no working directory setting; set WORKDIR in the image"},
		{"backend_http2", "Slipway's ingress speaks HTTP/1.1 to services; h2-only (gRPC) backends do not work behind it"},
		{"env_file", "env files are expanded by hakopod's CLI at import time; inline the values first"},
	} {
		o.Unsupported(convert.SeverityError, f.key, f.msg)
	}
	for _, f := range []struct{ key, msg string }{
		{"network_access", "network policies are not carried over: all services of a Slipway application reach each other"},
		{"private_egress", "approved private destinations are not carried over: Slipway does not restrict egress"},
		{"database_client_profiles", "database client profiles (trust for hakopod's managed database certificates) are not carried over: services reach the application's own databases without them"},
		{"fs_group", "fs_group is not carried over: Slipway runs the image's own user and volume ownership follows the image"},
		{"run_as_user", "run_as_user is not carried over: Slipway runs the image's own user (set USER in the image)"},
		{"run_as_group", "run_as_group is not carried over: Slipway runs the image's own user"},
		{"read_only_root_filesystem", "a read-only root filesystem is not carried over"},
		{"temporary_mounts", "temporary mounts are not carried over: the container filesystem is writable scratch space"},
		{"architecture", "architecture selection is not carried over: Swarm pulls the image for its nodes"},
		{"node_name", "node pinning is not carried over"},
		{"registry_credential", "registry credentials are configured on the Slipway daemon, not in the manifest"},
		{"tls", "TLS certificates are managed by Slipway's ingress; the tls setting was dropped"},
		{"ingress_timeout_seconds", "the ingress response timeout is an installation setting in Slipway"},
		{"termination_grace_seconds", "Slipway has no stop grace setting; Docker's default of 10 seconds applies"},
		{"readiness", "listener (tcp/smtp) readiness has no Slipway equivalent: only HTTP or command checks exist"},
	} {
		o.Unsupported(convert.SeverityWarning, f.key, f.msg)
	}
	o.Skip("restart_nonce")
	if nets, ok := o.Strings("networks"); ok && !(len(nets) == 1 && nets[0] == "default") {
		o.Warn("networks", "network membership is not carried over: all services of a Slipway application share one private network")
	}
	// Extra private ports need no declaration: services of one application
	// reach each other on any container port. Only a remapping is lost.
	for _, p := range o.Objs("ports") {
		port, _ := p.Int("port")
		if target, ok := p.Int("target_port"); ok && target != port {
			p.Warn("target_port", "Slipway does not remap ports: other services reach this endpoint on container port %d, not %d", target, port)
		}
		p.Skip("name", "protocol")
		p.Done()
	}

	port, hasPort := o.Int("port")
	if hasPort && (port < 1 || port > 65535) {
		o.Error("port", "%d is outside 1-65535", port)
		hasPort = false
	}
	if hasPort {
		if t.ports == nil {
			t.ports, t.public = map[string]int64{}, map[string]bool{}
		}
		t.ports[name] = port
	}
	if public, _ := o.Bool("public"); public {
		if !hasPort {
			o.Error("public", "a public service needs a port")
		} else {
			t.public[name] = true
		}
	}

	if cmd, ok := o.Strings("command"); ok {
		svc.Command = convert.EscapeAll(cmd)
	}
	if args, ok := o.Strings("args"); ok {
		svc.Arguments = convert.EscapeAll(args)
	}
	t.env(&svc, o, appEnv)
	if s := o.Obj("secrets"); s != nil {
		t.secretRefs(&svc, s)
	}
	if shared != nil {
		t.secretRefs(&svc, shared)
	}
	t.files(&svc, o)
	if deps, ok := o.Strings("depends_on"); ok {
		for _, dep := range deps {
			native, known := t.svcNames[dep]
			switch {
			case !known:
				o.Error("depends_on", "%q is not a service of this application", dep)
			case t.jobs[native]:
				// Every Slipway job runs before any service rolls out.
			default:
				svc.DependsOn = append(svc.DependsOn, native)
			}
		}
	}
	t.resources(&svc, o)
	replicas, hasReplicas := o.Int("replicas")
	if hasReplicas && (replicas < 1 || replicas > 20) {
		o.Error("replicas", "%d is outside hakopod's 1-20", replicas)
		hasReplicas = false
	}
	if hasReplicas && replicas != 1 {
		svc.Replicas = manifest.NewInt(replicas)
	}
	if a := o.Obj("autoscaling"); a != nil {
		// hakopod runs min_replicas (default 1) when autoscaling is set.
		if n, ok := a.Int("min_replicas"); ok && n > 1 && n <= 20 {
			svc.Replicas = manifest.NewInt(n)
		}
		a.Skip(a.Keys()...)
		a.Done()
		a.Warn("", "autoscaling is not carried over: the service runs its minimum replica count")
	}
	if suspended, _ := o.Bool("suspended"); suspended {
		svc.Replicas = manifest.NewInt(0)
		o.Warn("suspended", "the service is stopped (replicas = 0); its saved replica count is not kept, so set replicas again to resume it")
	}
	// Both are read: hakopod mounts the legacy volume and the named ones.
	legacy := t.volume(&svc, o)
	named := t.mounts(&svc, o)
	stopFirst := legacy || named
	switch s, _ := o.Str("update_strategy"); s {
	case "", "rolling":
		if !stopFirst {
			svc.Rollout = nil
		}
	case "recreate":
		stopFirst = true
	default:
		o.Error("update_strategy", "%q is neither rolling nor recreate", s)
	}
	if stopFirst {
		svc.Rollout = &manifest.Rollout{Order: manifest.RolloutStopFirst}
	} else if o.Has("update_strategy") {
		svc.Rollout = &manifest.Rollout{Order: manifest.RolloutStartFirst}
	}
	t.healthcheck(&svc, o, port, hasPort)

	if job := o.Obj("job"); job != nil {
		t.job(&svc, job)
	}
	o.Done()
	t.where[name] = o.Path
	t.m.Spec.Services = append(t.m.Spec.Services, svc)
	if t.public[name] && !t.jobs[name] {
		// Routes come from [domains]; without one there is no hostname.
		if !t.hasDomain(key) {
			o.Warn("public", "hakopod's generated public hostname has no Slipway equivalent; map a hostname in [domains] or add a [[spec.routes]] entry for port %d", port)
		}
	}
}

func (t *translator) hasDomain(key string) bool { return t.domainTargets[key] }

func (t *translator) env(svc *manifest.Service, o *convert.Obj, appEnv map[string]envValue) {
	env := map[string]envValue{}
	for k, v := range appEnv {
		env[k] = v
	}
	if e := o.Obj("env"); e != nil {
		for _, k := range e.Keys() {
			if v, ok := e.Scalar(k); ok {
				env[k] = envValue{v, e.At(k)}
			}
		}
	}
	for _, k := range convert.SortedKeys(env) {
		if !convert.ValidEnvKey(k) {
			t.d.Error(env[k].at, "%q is not a valid environment variable name", k)
			continue
		}
		convert.SetEnv(svc, k, t.placeholders(env[k].at, env[k].value))
	}
}

// siteOrigin is the representative origin hakopod templates write where the
// site's own URL goes; its planner replaces it, like the placeholders.
const siteOrigin = "https://catalog.example.test"

var placeholderRE = regexp.MustCompile(`\{\{(config\.([A-Za-z0-9_.-]+)|site_host|site_hostname)\}\}`)

// placeholders turns the values hakopod's template planner fills into
// environment values ({{config.<name>}}, {{site_host}}, {{site_hostname}}
// and the representative site origin) into Slipway variables, which each
// environment sets.
func (t *translator) placeholders(at, v string) string {
	out := placeholderRE.ReplaceAllStringFunc(convert.EscapeRefs(v), func(h string) string {
		m := placeholderRE.FindStringSubmatch(h)
		name := m[1]
		if m[2] != "" {
			name = varName(m[2])
		}
		return t.vars.Ref(at, name, nil)
	})
	if strings.Contains(out, siteOrigin) {
		out = strings.ReplaceAll(out, siteOrigin, t.vars.Ref(at, "site_url", nil))
	}
	return out
}

// varName makes a template value's name a Slipway variable name.
func varName(s string) string {
	if convert.ValidVarName(s) {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	out := string(b)
	if out == "" || !(out[0] >= 'a' && out[0] <= 'z' || out[0] >= 'A' && out[0] <= 'Z' || out[0] == '_') {
		out = "_" + out
	}
	if len(out) > 63 {
		out = out[:63]
	}
	return out
}

// secretRefs mounts each { ref = "name" } environment binding as a stored
// secret file, since Slipway never puts secrets in the environment.
func (t *translator) secretRefs(svc *manifest.Service, o *convert.Obj) {
	for _, env := range o.Keys() {
		ref := o.Obj(env)
		if ref == nil {
			continue
		}
		name, ok := ref.Str("ref")
		ref.Done()
		if !ok || name == "" || !convert.ValidEnvKey(env) {
			o.Error(env, "a secret binding needs a valid variable name and ref = \"<secret>\"")
			continue
		}
		stored := convert.Name(name)
		target := convert.MountSecret(svc, stored, convert.SecretFileName(env))
		o.Warn(env, "Slipway never puts secrets in the environment: stored secret %q is mounted as the file %s instead of the variable %s, so the application must read it from that file; set its value with slipway app secret before deploying", stored, target, env)
	}
}

func (t *translator) files(svc *manifest.Service, o *convert.Obj) {
	var entries []*convert.Obj
	switch o.M["files"].(type) {
	case map[string]any:
		tbl := o.Obj("files")
		for _, k := range tbl.Keys() {
			if f := tbl.Obj(k); f != nil {
				entries = append(entries, f)
			}
		}
	default:
		entries = o.Objs("files")
	}
	for _, f := range entries {
		f.Skip("name")
		mountPath, _ := f.Str("mount_path")
		target, err := convert.CleanPath(mountPath)
		if err != nil {
			f.Error("mount_path", "%v", err)
			f.Skip(f.Keys()...)
			continue
		}
		mode, hasMode := fileMode(f)
		content, hasContent := f.Str("content")
		secret, hasSecret := f.Str("secret")
		if !hasSecret {
			secret, hasSecret = f.Str("ref")
		}
		f.Done()
		switch {
		case hasContent && content != "":
			file := manifest.File{Target: target, Content: content}
			if hasMode {
				file.Mode = mode
			}
			svc.Files = append(svc.Files, file)
		case hasSecret && secret != "":
			if len(target) <= len("/run/secrets/") || target[:len("/run/secrets/")] != "/run/secrets/" {
				f.Error("mount_path", "a secret file must be mounted under /run/secrets in Slipway; %s is not", target)
				continue
			}
			stored := convert.Name(secret)
			svc.Secrets = append(svc.Secrets, manifest.SecretMount{Name: stored, Target: target})
			f.Warn("", "stored secret %q must be set with slipway app secret before deploying", stored)
		default:
			f.Error("", "a file needs non-empty content or a secret reference")
		}
	}
}

var modeRE = regexp.MustCompile(`^0?[0-7]{3}$`)

// fileMode reads an octal mode written as a string ("0644") or a TOML
// integer (0o644), as Slipway's four-digit string.
func fileMode(f *convert.Obj) (string, bool) {
	v, ok := f.Raw("mode")
	if !ok {
		return "", false
	}
	if n, isInt := convert.AsInt(v); isInt && n >= 0 && n <= 0o777 {
		return fmt.Sprintf("%04o", n), true
	}
	if s, isStr := v.(string); isStr && modeRE.MatchString(s) {
		if len(s) == 3 {
			s = "0" + s
		}
		return s, true
	}
	f.Error("mode", "expected an octal file mode from 0000 to 0777")
	return "", false
}

func (t *translator) resources(svc *manifest.Service, o *convert.Obj) {
	size := "small"
	if s, ok := o.Str("size"); ok {
		size = s
	}
	p, ok := profiles[size]
	if !ok {
		o.Error("size", "%q is not a size profile (small, medium, large, compute, gpu)", size)
		p = profiles["small"]
	}
	if size == "gpu" {
		o.Warn("size", "the gpu profile's CPU and memory limits are carried over, but Slipway provides no GPU")
	}
	res := &manifest.Resources{CPUMillis: manifest.NewInt(p.cpuLimit), MemoryBytes: manifest.NewInt(p.memLimit)}
	if r := o.Obj("resources"); r != nil {
		if v, ok := r.Raw("cpu_limit"); ok {
			if n, err := convert.CPUMillis(v, true); err != nil || n > 64000 {
				r.Error("cpu_limit", "not a CPU quantity from 1m to 64 cores: %v", err)
			} else {
				res.CPUMillis = manifest.NewInt(n)
			}
		}
		if v, ok := r.Str("memory_limit"); ok {
			if n, err := convert.Bytes(v, convert.KubernetesBytes); err != nil {
				r.Error("memory_limit", "%v", err)
			} else {
				res.MemoryBytes = manifest.NewInt(n)
			}
		}
		for _, k := range []string{"cpu_request", "memory_request"} {
			r.Unsupported(convert.SeverityWarning, k, "Slipway sets limits only; requests (scheduler reservations) were dropped")
		}
		r.Done()
	}
	svc.Resources = res
}

// volume translates the legacy one-per-service persistent volume.
func (t *translator) volume(svc *manifest.Service, o *convert.Obj) bool {
	v := o.Obj("volume")
	if v == nil {
		return false
	}
	mountPath, _ := v.Str("mount_path")
	for _, f := range []string{"size_gib", "storage_class"} {
		v.Unsupported(convert.SeverityWarning, f, "Slipway volumes are local Docker volumes without a size or storage class; the setting was dropped")
	}
	v.Done()
	target, err := convert.CleanPath(mountPath)
	if err != nil {
		v.Error("mount_path", "%v", err)
		return false
	}
	name := convert.Name(svc.Name + "-data")
	t.volumes = append(t.volumes, name)
	svc.Mounts = append(svc.Mounts, manifest.Mount{Volume: name, Target: target})
	return true
}

func (t *translator) mounts(svc *manifest.Service, o *convert.Obj) bool {
	writable := false
	for _, mo := range o.Objs("mounts") {
		vol, _ := mo.Str("volume")
		mountPath, _ := mo.Str("mount_path")
		readOnly, _ := mo.Bool("read_only")
		mo.Unsupported(convert.SeverityError, "sub_path", "Slipway mounts whole volumes; sub_path has no equivalent")
		mo.Done()
		target, err := convert.CleanPath(mountPath)
		native := convert.Name(vol)
		if err != nil || !t.declared(native) {
			mo.Error("", "a mount needs a volume declared in [volumes] and an absolute mount_path")
			continue
		}
		svc.Mounts = append(svc.Mounts, manifest.Mount{Volume: native, Target: target, ReadOnly: readOnly})
		writable = writable || !readOnly
	}
	return writable
}

func (t *translator) declared(v string) bool {
	for _, x := range t.volumes {
		if x == v {
			return true
		}
	}
	return false
}

// healthcheck accepts healthcheck = "/path" or a table with path (and
// optionally port); it probes the service's main port.
func (t *translator) healthcheck(svc *manifest.Service, o *convert.Obj, port int64, hasPort bool) {
	var path string
	switch v := o.M["healthcheck"].(type) {
	case nil:
		if o.Has("startup_timeout_seconds") {
			o.Int("startup_timeout_seconds")
			o.Warn("startup_timeout_seconds", "without an HTTP healthcheck the startup budget has nothing to apply to and was dropped")
		}
		return
	case string:
		o.Skip("healthcheck")
		path = v
	case map[string]any:
		h := o.Obj("healthcheck")
		path, _ = h.Str("path")
		if p, ok := h.Int("port"); ok {
			port, hasPort = p, p >= 1 && p <= 65535
		}
		h.Done()
	default:
		o.Error("healthcheck", "expected an HTTP path, got %s", convert.TypeName(v))
		return
	}
	if err := convert.CheckHTTPPath(path); err != nil {
		o.Error("healthcheck", "%v", err)
		return
	}
	if !hasPort {
		o.Error("healthcheck", "an HTTP healthcheck needs the service's port")
		return
	}
	svc.Healthcheck = &manifest.Healthcheck{Type: manifest.HealthcheckHTTP, Port: manifest.NewInt(port), Path: path}
	if s, ok := o.Int("startup_timeout_seconds"); ok {
		if s < 1 || s > 3600 {
			o.Error("startup_timeout_seconds", "%d is outside 1-3600", s)
		} else {
			// The startup budget during which failed checks are tolerated is
			// Slipway's start period.
			svc.Healthcheck.StartPeriodSeconds = manifest.NewInt(s)
		}
	}
}

// job turns a job service into a stopped holder service (replicas 0, so
// the job can reuse its image, environment and secrets) and a before-rollout
// job that runs its command.
func (t *translator) job(svc *manifest.Service, o *convert.Obj) {
	// The job runs its service's command and arguments: a command of its
	// own would replace the image's ENTRYPOINT, which args alone keep.
	job := manifest.Job{Name: svc.Name, Service: svc.Name, Run: manifest.JobRunBeforeRollout}
	if s, ok := o.Int("timeout_seconds"); ok {
		if s < 1 || s > 86400 {
			o.Error("timeout_seconds", "%d is outside 1-86400", s)
		} else {
			job.TimeoutSeconds = manifest.NewInt(s)
		}
	}
	if r, ok := o.Int("retries"); ok && r > 0 {
		o.Warn("retries", "Slipway runs a job once per deployment; %d retries were dropped", r)
	}
	// A scheduled job: Slipway runs it on the same five-field cron
	// schedule, in UTC, instead of before each rollout.
	if sched, ok := o.Str("schedule"); ok {
		if _, err := manifest.ParseSchedule(sched); err != nil {
			o.Error("schedule", "%v", err)
		} else {
			job.Schedule, job.Run = sched, manifest.JobRunSchedule
			o.Warn("schedule", "runs on this schedule in UTC, one run at a time (concurrency forbid)")
		}
	}
	o.Done()
	svc.Replicas = manifest.NewInt(0)
	svc.Healthcheck = nil
	if len(t.m.Spec.Jobs) >= 16 {
		o.Error("", "Slipway allows at most 16 jobs per application")
		return
	}
	t.m.Spec.Jobs = append(t.m.Spec.Jobs, job)
}

func (t *translator) domain(o *convert.Obj, host, target string) {
	native, known := t.svcNames[target]
	hostname, err := convert.CheckHostname(host, false)
	switch {
	case err != nil:
		o.Error(host, "%v", err)
	case !known || !t.public[native] || t.jobs[native]:
		o.Error(host, "%q is not a public HTTP service of this application", target)
	default:
		t.m.Spec.Routes = append(t.m.Spec.Routes, manifest.Route{Hostname: hostname, Service: native, Port: int(t.ports[native]), Visibility: manifest.VisibilityPublic})
	}
}
