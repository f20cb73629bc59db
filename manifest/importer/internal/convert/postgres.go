package convert

import (
	"fmt"

	"github.com/slipwayhq/slipway/manifest"
)

// PostgresPort is the port the generated PostgreSQL service listens on.
const PostgresPort = 5432

// Postgres is a PostgreSQL service generated for a managed database of the
// source platform (skali databases, ply's postgres@N members).
type Postgres struct {
	Service manifest.Service
	Volume  manifest.Volume
	Secret  manifest.SecretDeclaration
	User    string
	DB      string
}

// NewPostgres builds the service, its data volume and its generated superuser
// password. The official image's entrypoint reads the password from
// POSTGRES_PASSWORD_FILE, so the value never enters the environment.
//
// Slipway cannot place a generated secret inside an environment value, so a
// connection URL handed to other services cannot carry the password. The
// service therefore trusts connections from the application's private network,
// which only this application's services join (see the manifest spec's
// networking rules); callers warn about it.
func NewPostgres(name, version, user, db string) Postgres {
	secret := name + "-password"
	if len(secret) > 63 {
		secret = Name(name[:50] + "-password")
	}
	dataDir := "/var/lib/postgresql/data"
	if v := leadingInt(version); v >= 18 {
		// postgres:18 moved PGDATA below /var/lib/postgresql/<major>/ and
		// declares /var/lib/postgresql as its volume.
		dataDir = "/var/lib/postgresql"
	}
	secretPath := "/run/secrets/" + secret
	return Postgres{
		User: user,
		DB:   db,
		Service: manifest.Service{
			Name:   name,
			Source: manifest.Source{Type: manifest.SourceImage, Image: "postgres:" + version},
			Environment: map[string]string{
				"POSTGRES_USER":             user,
				"POSTGRES_DB":               db,
				"POSTGRES_PASSWORD_FILE":    secretPath,
				"POSTGRES_HOST_AUTH_METHOD": "trust",
			},
			Healthcheck: &manifest.Healthcheck{
				Type:               manifest.HealthcheckCommand,
				Command:            []string{"pg_isready", "-h", "127.0.0.1", "-U", user, "-d", db},
				IntervalSeconds:    manifest.NewInt(5),
				TimeoutSeconds:     manifest.NewInt(3),
				StartPeriodSeconds: manifest.NewInt(30),
				Retries:            manifest.NewInt(6),
			},
			Mounts:  []manifest.Mount{{Volume: name + "-data", Target: dataDir}},
			Secrets: []manifest.SecretMount{{Name: secret, Target: secretPath}},
			Rollout: &manifest.Rollout{Order: manifest.RolloutStopFirst},
		},
		Volume: manifest.Volume{Name: name + "-data"},
		Secret: manifest.SecretDeclaration{Name: secret, Generate: manifest.Generate{Type: manifest.GenerateRandom, Bytes: 24}},
	}
}

// URL is the connection URL other services use (no password: see NewPostgres).
func (p Postgres) URL() string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", p.User, p.Service.Name, PostgresPort, p.DB)
}

// PasswordMount mounts the generated password into a consuming service.
func (p Postgres) PasswordMount() manifest.SecretMount { return p.Service.Secrets[0] }

func leadingInt(s string) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
		if n > 1000 {
			break
		}
	}
	return n
}
