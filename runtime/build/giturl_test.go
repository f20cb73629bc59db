package build

import "testing"

func TestParseRemote(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		url      string
		code     string
		protocol string
	}{
		{name: "file", url: "file:///srv/git/app.git", protocol: "file"},
		{name: "https", url: "https://example.com/team/app.git", protocol: "https"},
		{name: "http with user", url: "http://bot@example.com/team/app.git", protocol: "http"},
		{name: "ssh", url: "ssh://git@example.com:2222/team/app.git", protocol: "ssh"},
		{name: "scp-like", url: "git@github.com:team/app.git", protocol: "ssh"},
		{name: "git protocol", url: "git://example.com/app.git", protocol: "git"},
		{name: "ext helper", url: "ext::sh -c touch% /tmp/pwned", code: CodeRepositoryURLInvalid},
		{name: "ext helper no spaces", url: "ext::/bin/false", code: CodeTransportUnsupported},
		{name: "ext helper with url-looking tail", url: "ext::curl%20https://x", code: CodeTransportUnsupported},
		{name: "fd helper", url: "fd::3", code: CodeTransportUnsupported},
		{name: "uppercase helper", url: "EXT::sh", code: CodeTransportUnsupported},
		{name: "transport address", url: "persistent-https::example.com/app", code: CodeTransportUnsupported},
		{name: "helper scheme", url: "testhelper://example.com/app", code: CodeTransportUnsupported},
		{name: "ftp", url: "ftp://example.com/app.git", code: CodeTransportUnsupported},
		{name: "rsync", url: "rsync://example.com/app.git", code: CodeTransportUnsupported},
		{name: "bare absolute path", url: "/srv/git/app.git", code: CodeRepositoryURLInvalid},
		{name: "bare relative path", url: "./app.git", code: CodeRepositoryURLInvalid},
		{name: "plain word", url: "app", code: CodeRepositoryURLInvalid},
		{name: "empty", url: "", code: CodeRepositoryURLInvalid},
		{name: "option injection", url: "--upload-pack=touch /tmp/x", code: CodeRepositoryURLInvalid},
		{name: "password in url", url: "https://bot:s3cret@example.com/app.git", code: CodeRepositoryURLInvalid},
		{name: "no host", url: "https:///app.git", code: CodeRepositoryURLInvalid},
		{name: "file with host", url: "file://otherhost/srv/app.git", code: CodeRepositoryURLInvalid},
		{name: "file relative", url: "file://app.git", code: CodeRepositoryURLInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := parseRemote(tt.url)
			if tt.code != "" {
				wantCode(t, err, tt.code)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.protocol != tt.protocol {
				t.Fatalf("protocol = %q, want %q", r.protocol, tt.protocol)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	got := RedactURL("https://bot:s3cret@example.com/app.git?token=abc#frag")
	if got != "https://bot:xxxxx@example.com/app.git" {
		t.Fatalf("RedactURL = %q", got)
	}
}
