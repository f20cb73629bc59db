package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hashRepoFiles are the repository files the hash fixtures mount.
var hashRepoFiles = map[string][]byte{"deploy/config.yaml": []byte("listen: :3000\n")}

func decodeTestFile(t testing.TB, path string) *Manifest {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	format := "toml"
	if strings.HasSuffix(path, ".json") {
		format = "json"
	}
	m, err := Decode(data, format)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	return m
}

func mustSpecHash(t testing.TB, m *Manifest) string {
	t.Helper()
	h, err := SpecHash(m, hashRepoFiles)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSpecHash_Golden pins the hash of every fixture: a change to the
// canonical form must bump SpecHashVersion, since stored hashes would no
// longer match. Regenerate with -update only together with such a bump.
func TestSpecHash_Golden(t *testing.T) {
	files, err := filepath.Glob("testdata/hash/*.toml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%s %s\n", filepath.Base(f), mustSpecHash(t, decodeTestFile(t, f)))
	}
	checkGolden(t, "testdata/hash/golden.txt", []byte(b.String()))
}

func TestSpecHash_FormatIndependent(t *testing.T) {
	t.Parallel()
	want := mustSpecHash(t, decodeTestFile(t, "testdata/hash/notes.toml"))
	if got := mustSpecHash(t, decodeTestFile(t, "testdata/hash/notes-reordered.toml")); got != want {
		t.Errorf("reordered and reformatted manifest hashes %s, want %s", got, want)
	}
}

// TestSpecHash_RoundTrip decodes the canonical JSON form again.
func TestSpecHash_RoundTrip(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/hash/*.toml")
	for _, f := range files {
		m := decodeTestFile(t, f)
		want := mustSpecHash(t, m)
		data, err := CanonicalJSON(m)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Decode(data, "json")
		if err != nil {
			t.Fatalf("%s: canonical JSON does not decode: %v\n%s", f, err, data)
		}
		if got := mustSpecHash(t, again); got != want {
			t.Errorf("%s: hash after round trip %s, want %s", f, got, want)
		}
		// Canonicalizing is idempotent.
		data2, _ := CanonicalJSON(again)
		if string(data2) != string(data) {
			t.Errorf("%s: canonical JSON changed on a second pass", f)
		}
	}
}

func TestSpecHash_Changes(t *testing.T) {
	t.Parallel()
	base := decodeTestFile(t, "testdata/hash/notes.toml")
	baseHash := mustSpecHash(t, base)
	tests := []struct {
		name string
		edit func(m *Manifest)
		same bool
	}{
		{name: "replicas written as the default", same: true, edit: func(m *Manifest) { m.Spec.Services[1].Replicas = NewInt(1) }},
		{name: "replicas", edit: func(m *Manifest) { m.Spec.Services[1].Replicas = NewInt(2) }},
		{name: "command order", edit: func(m *Manifest) { m.Spec.Services[0].Command = []string{"serve", "notes"} }},
		{name: "arguments order", edit: func(m *Manifest) { m.Spec.Services[0].Arguments = []string{"3000", "--port"} }},
		{name: "job order", edit: func(m *Manifest) { m.Spec.Jobs[0], m.Spec.Jobs[1] = m.Spec.Jobs[1], m.Spec.Jobs[0] }},
		{name: "depends_on order", same: true, edit: func(m *Manifest) { m.Spec.Services[0].DependsOn = []string{"cache", "postgres"} }},
		{name: "volume order", same: true, edit: func(m *Manifest) { m.Spec.Volumes[0], m.Spec.Volumes[1] = m.Spec.Volumes[1], m.Spec.Volumes[0] }},
		{name: "route order", same: true, edit: func(m *Manifest) { m.Spec.Routes[0], m.Spec.Routes[1] = m.Spec.Routes[1], m.Spec.Routes[0] }},
		{name: "environment value", edit: func(m *Manifest) { m.Spec.Services[0].Environment["RUST_LOG"] = "debug" }},
		{name: "inline file content", edit: func(m *Manifest) { m.Spec.Services[0].Files[0].Content = "bye" }},
		{name: "file mode", edit: func(m *Manifest) { m.Spec.Services[0].Files[1].Mode = "0400" }},
		{name: "self source becomes a URL", edit: func(m *Manifest) {
			m.Spec.Services[0].Source.Repository = &Repository{URL: "https://example.com/team/notes.git", Branch: "main"}
		}},
		{name: "variable value", edit: func(m *Manifest) { m.Spec.Variables["domain"] = StringValue("notes.example.org") }},
		{name: "variable type", edit: func(m *Manifest) { m.Spec.Variables["web_replicas"] = StringValue("1") }},
		{name: "manifest connection", same: true, edit: func(m *Manifest) {
			m.Spec.Manifest = &ManifestSource{Path: "x.toml", Repository: &Repository{URL: "https://example.com/other.git"}, Sync: &Sync{Mode: SyncPoll}}
		}},
		{name: "no manifest connection", same: true, edit: func(m *Manifest) { m.Spec.Manifest = nil }},
		{name: "api version and name", same: true, edit: func(m *Manifest) { m.APIVersion = PiqueldAPIVersion; m.Metadata.Name = "other" }},
		{name: "receives telemetry", edit: func(m *Manifest) { m.Spec.Services[2].ReceivesTelemetry = true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := cloneManifest(base)
			tt.edit(m)
			got := mustSpecHash(t, m)
			if (got == baseHash) != tt.same {
				t.Errorf("hash changed = %v, want %v", got != baseHash, !tt.same)
			}
			if mustSpecHash(t, base) != baseHash {
				t.Fatal("the edit reached the shared base manifest")
			}
		})
	}
}

func TestSpecHash_RepositoryFiles(t *testing.T) {
	t.Parallel()
	m := decodeTestFile(t, "testdata/hash/notes.toml")
	a := mustSpecHash(t, m)
	b, err := SpecHash(m, map[string][]byte{"deploy/config.yaml": []byte("listen: :8080\n")})
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Error("changed repository file content kept the hash")
	}
	if _, err := SpecHash(m, nil); err == nil || !strings.Contains(err.Error(), "deploy/config.yaml") {
		t.Errorf("missing repository file: err = %v", err)
	}
	// Unused repository files do not count.
	c, err := SpecHash(m, map[string][]byte{"deploy/config.yaml": []byte("listen: :3000\n"), "README.md": []byte("x")})
	if err != nil || c != a {
		t.Errorf("unused file changed the hash: %v", err)
	}
}

func TestServiceHash(t *testing.T) {
	t.Parallel()
	m := decodeTestFile(t, "testdata/hash/notes.toml")
	web, err := ServiceHash(m, "web", hashRepoFiles)
	if err != nil {
		t.Fatal(err)
	}
	pg, _ := ServiceHash(m, "postgres", hashRepoFiles)
	if web == pg {
		t.Fatal("two services hash the same")
	}
	// A change to another service keeps web's hash.
	m2 := cloneManifest(m)
	m2.Spec.Services[1].Replicas = NewInt(2)
	if got, _ := ServiceHash(m2, "web", hashRepoFiles); got != web {
		t.Error("web's hash changed with postgres")
	}
	if got, _ := ServiceHash(m2, "postgres", hashRepoFiles); got == pg {
		t.Error("postgres's hash did not change")
	}
	// Reordering its lists keeps it.
	m3 := cloneManifest(m)
	s := m3.Spec.Services[0].Secrets
	s[0], s[1] = s[1], s[0]
	if got, _ := ServiceHash(m3, "web", hashRepoFiles); got != web {
		t.Error("reordered secret mounts changed web's hash")
	}
	if _, err := ServiceHash(m, "nope", hashRepoFiles); err == nil {
		t.Error("unknown service: no error")
	}
	// The postgres service mounts no repository file, so needs none.
	if _, err := ServiceHash(m, "postgres", nil); err != nil {
		t.Errorf("postgres without repository files: %v", err)
	}
}
