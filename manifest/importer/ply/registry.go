package ply

import (
	"strconv"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer/internal/convert"
)

// param is one value in a ply params namespace. A secret param is a Slipway
// secret (generated or stored) and can only reach a service as a file.
type param struct {
	value  string
	secret string // native secret name when the param is secret
}

// member is what a registry package contributes: services, volumes, secrets,
// the port routes target, and the params consumers read as {name.param}.
type member struct {
	services []manifest.Service
	volumes  []string
	secrets  []manifest.SecretDeclaration
	port     int64
	params   map[string]param
}

// registry maps the few ply registry packages Slipway knows to official
// Docker images. Each gets the member's service name and image tag, and the
// params the member overrode.
var registry = map[string]func(name, tag string, overrides map[string]string) member{
	"postgres": func(name, tag string, ov map[string]string) member {
		user, db := pick(ov, "user", "postgres"), pick(ov, "database", "postgres")
		pg := convert.NewPostgres(name, tag, user, db)
		port := strconv.Itoa(convert.PostgresPort)
		return member{
			services: []manifest.Service{pg.Service},
			volumes:  []string{pg.Volume.Name},
			secrets:  []manifest.SecretDeclaration{pg.Secret},
			port:     convert.PostgresPort,
			params: map[string]param{
				"user": {value: user}, "database": {value: db},
				"password": {secret: pg.Secret.Name},
				"host":     {value: name}, "port": {value: port}, "addr": {value: name + ":" + port},
				"url": {value: pg.URL()},
			},
		}
	},
	"redis":  keyValue("redis", 6379),
	"valkey": keyValue("valkey/valkey", 6379),
}

func keyValue(image string, port int64) func(string, string, map[string]string) member {
	return func(name, tag string, _ map[string]string) member {
		p := strconv.FormatInt(port, 10)
		vol := name + "-data"
		return member{
			services: []manifest.Service{{
				Name:   name,
				Source: manifest.Source{Type: manifest.SourceImage, Image: image + ":" + tag},
				Mounts: []manifest.Mount{{Volume: vol, Target: "/data"}},
			}},
			volumes: []string{vol},
			port:    port,
			params: map[string]param{
				"host": {value: name}, "port": {value: p}, "addr": {value: name + ":" + p},
				"url": {value: "redis://" + name + ":" + p},
			},
		}
	}
}

func pick(m map[string]string, k, def string) string {
	if v, ok := m[k]; ok && v != "" {
		return v
	}
	return def
}
