package lines

import "testing"

func TestTOML(t *testing.T) {
	t.Parallel()
	src := `name = "app"
[services."web.api"]
image = "x"
env = { A = "1", B = { C = 2 } }
[[services."web.api".http]]
port = 80
[[services."web.api".http]]
port = 81
[services."web.api".readiness]
type.deep = "http"
[[service]]
name = "a"
[[service.http]]
port = 1
[[service]]
name = "b"
[[service.http]]
port = 2
list = [
  "one",
  { k = "v" },
]
`
	ix := TOML([]byte(src))
	for path, want := range map[string]int{
		"name":                                   1,
		`services."web.api"`:                     2,
		`services."web.api".image`:               3,
		`services."web.api".env.B.C`:             4,
		`services."web.api".http[0].port`:        6,
		`services."web.api".http[1].port`:        8,
		`services."web.api".readiness.type.deep`: 10,
		"service[0].name":                        12,
		"service[0].http[0].port":                14,
		"service[1].name":                        16,
		"service[1].http[0].port":                18,
		"service[1].http[0].list[1].k":           21,
		"service[1].http[0].list[0]":             20,
	} {
		if got := ix.Lookup(path); got != want {
			t.Errorf("Lookup(%s) = %d, want %d", path, got, want)
		}
	}
	if got := ix.Lookup(`services."web.api".http[1].missing`); got != 7 {
		t.Errorf("ancestor fallback = %d, want 7", got)
	}
	if got := ix.Lookup("nowhere.at.all"); got != 0 {
		t.Errorf("unknown = %d", got)
	}
}

func TestTOML_Broken(t *testing.T) {
	t.Parallel()
	ix := TOML([]byte("a = 1\nb = \n"))
	if ix.Lookup("a") != 1 {
		t.Errorf("index before the error lost: %v", ix)
	}
}

func TestYAML(t *testing.T) {
	t.Parallel()
	ix := YAML([]byte("name: x\napplications:\n  web:\n    ports:\n      - 80\n      - 81\n"))
	if ix.Lookup("applications.web.ports[1]") != 6 || ix.Lookup("applications.web.image") != 3 {
		t.Errorf("index = %v", ix)
	}
}
