package convert

import "testing"

func TestBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		units map[string]int64
		want  int64
		ok    bool
	}{
		{"256MB", SkaliBytes, 256e6, true},
		{"1GiB", SkaliBytes, 1 << 30, true},
		{"1G", SkaliBytes, 0, false},
		{"512Mi", KubernetesBytes, 512 << 20, true},
		{"512M", KubernetesBytes, 512e6, true},
		{"1048576", KubernetesBytes, 1 << 20, true},
		{"1.5Ki", KubernetesBytes, 1536, true},
		{"0.5", KubernetesBytes, 0, false},
		{"512M", CgroupBytes, 512 << 20, true},
		{"-1Mi", KubernetesBytes, 0, false},
		{"", SkaliBytes, 0, false},
	}
	for _, tt := range tests {
		got, err := Bytes(tt.in, tt.units)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("Bytes(%q) = %d, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestCPUMillis(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    any
		milli bool
		want  int64
		ok    bool
	}{
		{"250m", true, 250, true},
		{"250m", false, 0, false},
		{"1.5", true, 1500, true},
		{0.2, false, 200, true},
		{uint64(2), false, 2000, true},
		{"0.0001", false, 0, false},
		{"0", false, 0, false},
	}
	for _, tt := range tests {
		got, err := CPUMillis(tt.in, tt.milli)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("CPUMillis(%v) = %d, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestSeconds(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"1.5s": 2, "1500us": 1, "2µs": 1, "30s": 30, "5m": 300, "1h30m": 5400, "1d": 86400, "500ms": 1, "2w": 1209600} {
		if got, err := Seconds(in); err != nil || got != want {
			t.Errorf("Seconds(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "30", "5 minutes", "s"} {
		if _, err := Seconds(in); err == nil {
			t.Errorf("Seconds(%q) accepted", in)
		}
	}
}

func TestName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"web.api": "web-api", "Web_API": "web-api", "9lives": "x-9lives", "--": "x", "ok": "ok"} {
		if got := Name(in); got != want || !ValidName(got) {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
	n := Names{}
	if a, b := n.Claim("web.api"), n.Claim("web-api"); a != "web-api" || b != "web-api-2" {
		t.Errorf("Claim = %q, %q", a, b)
	}
}

func TestCheckImage(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"nginx":              "nginx",
		"nginx:1.27":         "nginx:1.27",
		"GHCR.io/acme/web:1": "ghcr.io/acme/web:1",
		"localhost:5000/a/b@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef": "localhost:5000/a/b@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	} {
		if got, err := CheckImage(in); err != nil || got != want {
			t.Errorf("CheckImage(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "https://ghcr.io/a", "user:pass@ghcr.io/a", "Nginx", "nginx:", "a/b@sha256:xyz"} {
		if _, err := CheckImage(in); err == nil {
			t.Errorf("CheckImage(%q) accepted", in)
		}
	}
}

func TestCheckHostname(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"Example.COM.", "a-b.example.com", "${{ vars.x }}", "api.${{ vars.DOMAIN }}", "app-${{ vars.ENV }}.example.com"} {
		if _, err := CheckHostname(in, false); err != nil {
			t.Errorf("CheckHostname(%q): %v", in, err)
		}
	}
	for _, in := range []string{"", "localhost", "http://a.com", "a.com:80", "a.com/x", "*.a.com", "-a.com",
		// Around a reference: a quote, a trailing hyphen, an empty label, a path.
		"${{ vars.N }}\"", "${{ vars.N }}-", "a..${{ vars.N }}", "${{ vars.N }}/x", "${{ vars.N"} {
		if _, err := CheckHostname(in, false); err == nil {
			t.Errorf("CheckHostname(%q) accepted", in)
		}
	}
}

func TestPruneZero(t *testing.T) {
	t.Parallel()
	m := map[string]any{
		"a": "", "b": int64(0), "c": false, "d": []any{}, "e": float64(0),
		"keep": "x", "n": int64(1), "t": true,
		"job":  map[string]any{"retries": int64(0)},
		"list": []any{map[string]any{"sub_path": "", "volume": "v"}, ""},
		"env":  map[string]any{"EMPTY": ""},
	}
	PruneZero(m, map[string]bool{"env": true})
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if _, ok := m[k]; ok {
			t.Errorf("%s kept", k)
		}
	}
	if job, ok := m["job"].(map[string]any); !ok || len(job) != 0 {
		t.Errorf("job = %v (tables stay, emptied)", m["job"])
	}
	list := m["list"].([]any)
	if len(list) != 2 || len(list[0].(map[string]any)) != 1 {
		t.Errorf("list = %v", list)
	}
	if m["env"].(map[string]any)["EMPTY"] != "" || m["keep"] != "x" || m["n"] != int64(1) || m["t"] != true {
		t.Errorf("m = %v", m)
	}
}
