package ingress

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func matchTable() *Table {
	be := &Backend{Service: "svc", Port: 80}
	return &Table{Version: 1, Routes: []Route{
		{Hostname: "notes.example.com", Visibility: VisibilityPublic, Backend: be},
		{Hostname: "*.tenants.example.com", Visibility: VisibilityPublic, Backend: be},
		{Hostname: "special.tenants.example.com", Visibility: VisibilityPrivate, Backend: be},
		{Hostname: "*.example.com", Visibility: VisibilityPublic, Backend: be},
	}}
}

func TestMatcher_Match(t *testing.T) {
	t.Parallel()
	tbl := matchTable()
	if err := tbl.Validate(); err != nil {
		t.Fatal(err)
	}
	m := NewMatcher(tbl)
	tests := []struct {
		name string
		host string
		want string
	}{
		{"exact", "notes.example.com", "notes.example.com"},
		{"exact upper case with port", "NOTES.Example.com:8443", "notes.example.com"},
		{"exact trailing dot", "notes.example.com.", "notes.example.com"},
		{"wildcard one label", "acme.tenants.example.com", "*.tenants.example.com"},
		{"exact beats wildcard", "special.tenants.example.com", "special.tenants.example.com"},
		{"wildcard not two labels deep", "a.b.tenants.example.com", ""},
		{"wildcard does not match its own base", "tenants.example.com", "*.example.com"},
		{"base domain itself", "example.com", ""},
		{"foreign", "notes.example.org", ""},
		{"two labels below *.example.com", "x.notes.example.com", ""},
		{"empty", "", ""},
		{"ipv6 literal", "[::1]:80", ""},
		{"leading dot", ".example.com", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := m.Match(tt.host)
			got := ""
			if r != nil {
				got = r.Hostname
			}
			if got != tt.want {
				t.Errorf("Match(%q) = %q, want %q", tt.host, got, tt.want)
			}
		})
	}
}

func TestTable_Validate(t *testing.T) {
	t.Parallel()
	be := &Backend{Service: "svc", Port: 80}
	tests := []struct {
		name  string
		route Route
		code  string
	}{
		{"ok backend", Route{Hostname: "a.example.com", Visibility: VisibilityPublic, Backend: be}, ""},
		{"ok redirect", Route{Hostname: "a.example.com", Visibility: VisibilityPrivate, Redirect: &Redirect{To: "https://b.example.com/x"}}, ""},
		{"upper case", Route{Hostname: "A.example.com", Visibility: VisibilityPublic, Backend: be}, "route_hostname_invalid"},
		{"star inside", Route{Hostname: "a.*.example.com", Visibility: VisibilityPublic, Backend: be}, "route_hostname_invalid"},
		{"bare wildcard tld", Route{Hostname: "*.com", Visibility: VisibilityPublic, Backend: be}, "route_hostname_invalid"},
		{"port", Route{Hostname: "a.example.com:80", Visibility: VisibilityPublic, Backend: be}, "route_hostname_invalid"},
		{"visibility", Route{Hostname: "a.example.com", Visibility: "secret", Backend: be}, "route_visibility_invalid"},
		{"both targets", Route{Hostname: "a.example.com", Visibility: VisibilityPublic, Backend: be, Redirect: &Redirect{To: "https://b.example.com"}}, "route_target_invalid"},
		{"no target", Route{Hostname: "a.example.com", Visibility: VisibilityPublic}, "route_target_invalid"},
		{"bad status", Route{Hostname: "a.example.com", Visibility: VisibilityPublic, Redirect: &Redirect{To: "https://b.example.com", Status: 200}}, "route_redirect_status_invalid"},
		{"redirect query", Route{Hostname: "a.example.com", Visibility: VisibilityPublic, Redirect: &Redirect{To: "https://b.example.com/?q=1"}}, "route_redirect_to_invalid"},
		{"redirect scheme", Route{Hostname: "a.example.com", Visibility: VisibilityPublic, Redirect: &Redirect{To: "ftp://b.example.com"}}, "route_redirect_to_invalid"},
		{"port zero", Route{Hostname: "a.example.com", Visibility: VisibilityPublic, Backend: &Backend{Service: "s"}}, "route_backend_port_invalid"},
		{"service empty", Route{Hostname: "a.example.com", Visibility: VisibilityPublic, Backend: &Backend{Port: 80}}, "route_backend_service_missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := (&Table{Routes: []Route{tt.route}}).Validate()
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "("+tt.code+")") {
				t.Fatalf("Validate() = %v, want code %s", err, tt.code)
			}
		})
	}
	dup := Table{Routes: []Route{
		{Hostname: "a.example.com", Visibility: VisibilityPublic, Backend: be},
		{Hostname: "a.example.com", Visibility: VisibilityPublic, Backend: be},
	}}
	if err := dup.Validate(); err == nil || !strings.Contains(err.Error(), "route_hostname_duplicate") {
		t.Fatalf("duplicate: Validate() = %v", err)
	}
}

// FuzzMatch checks the matcher against a slow reference implementation.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"notes.example.com", "A.TENANTS.example.com:443", "a.b.tenants.example.com", "example.com.", "[::1]:80", ":", "."} {
		f.Add(s)
	}
	tbl := matchTable()
	m := NewMatcher(tbl)
	f.Fuzz(func(t *testing.T, host string) {
		got := m.Match(host)
		h := strings.ToLower(host)
		if strings.HasPrefix(h, "[") {
			h = ""
		}
		if i := strings.LastIndex(h, ":"); i >= 0 {
			h = h[:i]
		}
		h = strings.TrimSuffix(h, ".")
		var want *Route
		for i := range tbl.Routes {
			r := &tbl.Routes[i]
			if r.Hostname == h {
				want = r
				break
			}
		}
		if want == nil && h != "" {
			for i := range tbl.Routes {
				r := &tbl.Routes[i]
				suffix, ok := strings.CutPrefix(r.Hostname, "*.")
				label, rest, found := strings.Cut(h, ".")
				if ok && found && label != "" && rest == suffix {
					want = r
				}
			}
		}
		if got != want {
			t.Fatalf("Match(%q) = %v, want %v", host, got, want)
		}
	})
}

func BenchmarkMatcher_Match(b *testing.B) {
	tbl := &Table{Version: 1}
	for i := range 5000 {
		tbl.Routes = append(tbl.Routes, Route{Hostname: fmt.Sprintf("app-%d.example.com", i), Visibility: VisibilityPublic, Backend: &Backend{Service: "s", Port: 80}})
		tbl.Routes = append(tbl.Routes, Route{Hostname: fmt.Sprintf("*.t%d.example.com", i), Visibility: VisibilityPublic, Backend: &Backend{Service: "s", Port: 80}})
	}
	m := NewMatcher(tbl)
	for _, host := range []string{"app-4321.example.com", "Tenant.t77.example.com:443", "unknown.example.org"} {
		b.Run(host, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m.Match(host)
			}
		})
	}
}

func TestCertificates_AllowACME(t *testing.T) {
	t.Parallel()
	p := NewProxy(t.Context(), slog.Default(), nil)
	if err := p.SetTable(*matchTable()); err != nil {
		t.Fatal(err)
	}
	c := &certificates{proxy: p}
	for name, ok := range map[string]bool{
		"notes.example.com":           true,
		"special.tenants.example.com": false, // private
		"acme.tenants.example.com":    false, // only a wildcard route covers it
		"other.example.org":           false,
	} {
		if err := c.allowACME(t.Context(), name); (err == nil) != ok {
			t.Errorf("allowACME(%s) = %v, want allowed=%v", name, err, ok)
		}
	}
}
