package ply

import (
	"strconv"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer/internal/convert"
)

// registry maps the few ply registry packages Slipway knows to official
// Docker images. Each gets the member's service name and image tag, and the
// params the member overrode.
var registry = map[string]func(name, tag string, overrides map[string]string) *member{
	"postgres": func(name, tag string, ov map[string]string) *member {
		user, db := pick(ov, "user", "postgres"), pick(ov, "database", "postgres")
		pg := convert.NewPostgres(name, tag, user, db)
		port := strconv.Itoa(convert.PostgresPort)
		ns := newNamespace()
		for k, v := range map[string]string{"user": user, "database": db, "host": name, "name": name,
			"port": port, "addr": name + ":" + port, "url": pg.URL()} {
			ns.declared[k] = param{value: convert.EscapeRefs(v)}
		}
		ns.declared["password"] = param{secret: pg.Secret.Name}
		return &member{
			services:     []manifest.Service{pg.Service},
			volumes:      []string{pg.Volume.Name},
			secrets:      []manifest.SecretDeclaration{pg.Secret},
			port:         convert.PostgresPort,
			params:       ns,
			secretParams: map[string]bool{"password": true},
		}
	},
	"redis":  keyValue("redis", 6379),
	"valkey": keyValue("valkey/valkey", 6379),
}

func keyValue(image string, port int64) func(string, string, map[string]string) *member {
	return func(name, tag string, _ map[string]string) *member {
		p := strconv.FormatInt(port, 10)
		vol := name + "-data"
		ns := newNamespace()
		for k, v := range map[string]string{"host": name, "name": name, "port": p, "addr": name + ":" + p, "url": "redis://" + name + ":" + p} {
			ns.declared[k] = param{value: v}
		}
		return &member{
			services: []manifest.Service{{
				Name:   name,
				Source: manifest.Source{Type: manifest.SourceImage, Image: image + ":" + tag},
				Mounts: []manifest.Mount{{Volume: vol, Target: "/data"}},
			}},
			volumes: []string{vol},
			port:    port,
			params:  ns,
		}
	}
}

func pick(m map[string]string, k, def string) string {
	if v, ok := m[k]; ok && v != "" {
		return v
	}
	return def
}
