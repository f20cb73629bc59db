package proxyrig

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// Nginx is nginx running from a temporary prefix directory as this user,
// on unprivileged ports.
type Nginx struct {
	*Process
	Dir string
}

// NginxConfig is the whole configuration around http, the body of the
// http block (upstreams and servers): one worker per CPU ("auto") unless
// workers says otherwise, no access log, temporary files in the prefix.
func NginxConfig(workers, http string) string {
	if workers == "" {
		workers = "auto"
	}
	user := ""
	if os.Geteuid() == 0 {
		// Started as root, nginx runs its workers as nobody, who could
		// not write the temporary directories.
		user = "user root root;\n"
	}
	return fmt.Sprintf(`%sworker_processes %s;
pid nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path body;
  proxy_temp_path proxy;
  fastcgi_temp_path fastcgi;
  uwsgi_temp_path uwsgi;
  scgi_temp_path scgi;
%s
}
`, user, workers, http)
}

// StartNginx writes conf (see NginxConfig) into dir and runs nginx with
// dir as its prefix until Stop, and waits until it accepts connections at
// every address of ready.
func StartNginx(ctx context.Context, dir, conf string, ready ...string) (*Nginx, error) {
	bin, err := LookPath("nginx")
	if err != nil {
		return nil, fmt.Errorf("nginx is required (Debian package nginx-light): %w", err)
	}
	// nginx creates its temporary directories only when started as root.
	for _, d := range []string{"body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	p, err := start(bin, []string{"-p", dir, "-c", path, "-e", filepath.Join(dir, "error.log"), "-g", "daemon off;"}, nil, &logBuffer{})
	if err != nil {
		return nil, err
	}
	n := &Nginx{Process: p, Dir: dir}
	for _, addr := range ready {
		if err := p.waitListening(ctx, addr); err != nil {
			p.Stop()
			return nil, fmt.Errorf("nginx: %w; error.log: %s", err, n.ErrorLog())
		}
	}
	return n, nil
}

// ErrorLog is nginx's error log so far.
func (n *Nginx) ErrorLog() string {
	b, _ := os.ReadFile(filepath.Join(n.Dir, "error.log"))
	return string(b)
}
