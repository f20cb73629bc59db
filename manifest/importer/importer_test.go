package importer_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest/importer"
)

func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, src, want, wantErr string
	}{
		{name: "skali by name", file: "skali.yaml", src: "name: x\n", want: importer.Skali},
		{name: "skali by shape", file: "app.yml", src: "name: x\napplications:\n  web:\n    image: nginx\n", want: importer.Skali},
		{name: "ply by name", file: "ply.toml", src: "", want: importer.Ply},
		{name: "ply by package", file: "x.toml", src: "[package]\nname = \"x\"\n", want: importer.Ply},
		{name: "hakopod by schema_version", file: "x.toml", src: "schema_version = 1\nname = \"x\"\n", want: importer.Hakopod},
		{name: "hakopod by service fields", file: "x.toml", src: "name = \"x\"\n[services.web]\nimage = \"n\"\npublic = true\n", want: importer.Hakopod},
		{name: "gordon by http", file: "x.toml", src: "name = \"x\"\n[services.web]\nimage = \"n\"\n[[services.web.http]]\nport = 1\n", want: importer.Gordon},
		{name: "gordon by telemetry", file: "x.toml", src: "name = \"x\"\n[telemetry]\nlogs = false\n[services.web]\nimage = \"n\"\n", want: importer.Gordon},
		{name: "gordon by bind", file: "x.toml", src: "name = \"x\"\n[services.web]\nimage = \"n\"\n[[services.web.bind]]\nname = \"c\"\n", want: importer.Gordon},
		{name: "hakopod by volumes", file: "x.toml", src: "name = \"x\"\n[services.web]\nimage = \"n\"\n[volumes.data]\nsize = \"1Gi\"\n", want: importer.Hakopod},
		{name: "volume fits both", file: "x.toml", src: "name = \"x\"\n[services.web]\nimage = \"n\"\nvolume = \"data\"\n", wantErr: "detect_ambiguous"},
		{name: "compose by name", file: "deploy/docker-compose.prod.yml", src: "x: 1\n", want: importer.Compose},
		{name: "compose by compose.yaml", file: "compose.yaml", src: "", want: importer.Compose},
		{name: "compose by shape", file: "app.yaml", src: "services:\n  web:\n    image: nginx\n", want: importer.Compose},
		{name: "stack.toml is ply", file: "stack.toml", src: "", want: importer.Ply},
		{name: "gordon alpha", file: "x.toml", src: "name = \"x\"\n[[service]]\nname = \"web\"\n", want: importer.Gordon},
		{name: "ambiguous", file: "x.toml", src: "name = \"x\"\n[services.web]\nimage = \"n\"\n", wantErr: "detect_ambiguous"},
		{name: "unrecognized", file: "x.txt", src: "hello", wantErr: "detect_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := importer.Detect([]byte(tt.src), tt.file)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Detect = %q, %v; want error %s", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Detect = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestImport_UnknownDialect(t *testing.T) {
	t.Parallel()
	if _, err := importer.Import("heroku", []byte("x"), importer.Options{}); err == nil || !strings.Contains(err.Error(), "unknown_dialect") {
		t.Errorf("err = %v", err)
	}
}

func TestImport_TooLarge(t *testing.T) {
	t.Parallel()
	res, err := importer.Import(importer.Gordon, bytes.Repeat([]byte("#"), importer.MaxBytes+1), importer.Options{})
	if err != nil || res.OK() || res.Manifest != nil || len(res.Diagnostics) != 1 {
		t.Errorf("res = %+v, err = %v", res, err)
	}
}

func TestImport_NameOption(t *testing.T) {
	t.Parallel()
	res, err := importer.Import(importer.Gordon, []byte("name = \"Blog.Site\"\n[services.web]\nimage = \"nginx:1\"\n"), importer.Options{})
	if err != nil || res.Manifest.Metadata.Name != "blog-site" || len(res.Diagnostics) != 1 {
		t.Fatalf("normalized name: %+v %v", res, err)
	}
	res, err = importer.Import(importer.Gordon, []byte("name = \"Blog.Site\"\n[services.web]\nimage = \"nginx:1\"\n"), importer.Options{Name: "blog"})
	if err != nil || res.Manifest.Metadata.Name != "blog" || len(res.Diagnostics) != 0 {
		t.Fatalf("--name: %+v %v", res, err)
	}
}
