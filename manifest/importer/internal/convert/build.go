package convert

import (
	"sort"
	"strings"

	"github.com/slipwayhq/slipway/manifest"
)

// Options are the caller's choices for one import.
type Options struct {
	// Name overrides the application name found in the source.
	Name string
	// Repository is the clone URL of the repository the source file lives
	// in. Sources that build from their own project need it: the imported
	// manifest then names it in spec.manifest, with Branch (default main) and
	// ManifestPath (default slipway.toml).
	Repository   string
	Branch       string
	ManifestPath string
	// Domain is the domain whose subdomains serve a Docker Compose file's
	// published ports; without it, ports are only reported.
	Domain string
	// Filename is the source file's name as given (a path, perhaps), which
	// names a Docker Compose project that does not name itself.
	Filename string
}

// SelfRepository is the repository of a service the source platform built
// from the project itself. Without Options.Repository the import is not
// deployable as it stands, which is an error at path.
func SelfRepository(d *Diags, opts Options, path string) *manifest.Repository {
	if opts.Repository == "" {
		d.Error(path, "this builds from the project's own repository, which the file does not name: pass --repository <clone URL> (and --branch) so the Slipway manifest can build it (repository = \"self\" with spec.manifest)")
	}
	return &manifest.Repository{Self: true}
}

// New returns an empty native manifest with the header filled in.
func New() *manifest.Manifest {
	return &manifest.Manifest{APIVersion: manifest.APIVersion, Kind: manifest.Kind}
}

// AppName picks the application name: the --name option, else the source's
// own name normalized (with a warning when it changed). An unusable name is an
// error and a placeholder keeps the manifest valid.
func AppName(d *Diags, opts Options, path, source string) string {
	if opts.Name != "" {
		if !ValidName(opts.Name) {
			d.Error("", "--name %q is not a valid application name (1-63 lowercase letters, digits or hyphens, starting with a letter)", opts.Name)
			return "imported"
		}
		return opts.Name
	}
	if source == "" {
		d.Error(path, "the application has no name; pass --name")
		return "imported"
	}
	name := Name(source)
	if name != source {
		d.Warn(path, "application name %q normalized to %q", source, name)
	}
	return name
}

// MountSecret mounts a stored secret as the file /run/secrets/<file> and
// returns its path. Slipway never puts secret values in the environment.
func MountSecret(svc *manifest.Service, secret, file string) string {
	target := "/run/secrets/" + file
	for _, s := range svc.Secrets {
		if s.Target == target {
			return target
		}
	}
	svc.Secrets = append(svc.Secrets, manifest.SecretMount{Name: secret, Target: target})
	return target
}

// SecretFileName turns an environment variable name into a file name under
// /run/secrets that stays a single normalized path element.
func SecretFileName(env string) string {
	f := strings.Map(func(r rune) rune {
		if r == '/' || r < ' ' {
			return '_'
		}
		return r
	}, env)
	if f == "." || f == ".." || f == "" {
		f = "_" + f
	}
	return f
}

// AddVolume declares a named volume once.
func AddVolume(m *manifest.Manifest, name string) {
	for _, v := range m.Spec.Volumes {
		if v.Name == name {
			return
		}
	}
	m.Spec.Volumes = append(m.Spec.Volumes, manifest.Volume{Name: name})
}

// SetEnv sets an environment variable on a service.
func SetEnv(svc *manifest.Service, key, value string) {
	if svc.Environment == nil {
		svc.Environment = map[string]string{}
	}
	svc.Environment[key] = value
}

// SortedKeys returns a map's keys in order, for deterministic output.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// PruneDependencies drops depends_on entries naming services that did not
// survive translation (each was already reported), keeping the result valid.
func PruneDependencies(m *manifest.Manifest) {
	exists := map[string]bool{}
	for _, s := range m.Spec.Services {
		exists[s.Name] = true
	}
	for i := range m.Spec.Services {
		s := &m.Spec.Services[i]
		kept := s.DependsOn[:0]
		seen := map[string]bool{}
		for _, d := range s.DependsOn {
			if exists[d] && d != s.Name && !seen[d] {
				kept = append(kept, d)
				seen[d] = true
			}
		}
		s.DependsOn = kept
		if len(s.DependsOn) == 0 {
			s.DependsOn = nil
		}
	}
}

// LooksSecret reports whether an environment variable's name suggests a
// secret (a password, token or key), for warnings about values that
// Slipway would show in plans.
func LooksSecret(key string) bool {
	u := strings.ToUpper(key)
	for _, s := range []string{"PASSWORD", "PASSWD", "SECRET", "TOKEN", "KEY", "_PW", "CREDENTIAL"} {
		if strings.HasSuffix(u, s) || strings.Contains(u, s+"_") {
			return true
		}
	}
	return false
}

// VariableSecretNote is the warning for a secret-looking variable fed
// from a deploy-time value.
const VariableSecretNote = "Slipway variables are plain configuration shown in plans; if this is a secret, mount it as a stored secret file instead (slipway app secret)"

// DropSecretFile removes key_FILE and the secret mount it names, when a
// service sets key itself: images with the *_FILE convention refuse both.
func DropSecretFile(svc *manifest.Service, key string) bool {
	target, ok := svc.Environment[key+"_FILE"]
	if !ok {
		return false
	}
	delete(svc.Environment, key+"_FILE")
	kept := svc.Secrets[:0]
	for _, s := range svc.Secrets {
		if s.Target != target {
			kept = append(kept, s)
		}
	}
	svc.Secrets = kept
	if len(svc.Secrets) == 0 {
		svc.Secrets = nil
	}
	return true
}
