package ingress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Source says where the gateway reads its route table from: a unix socket
// (bind-mounted from the control plane's data directory) or a base URL
// with a gateway token.
type Source struct {
	SocketPath string
	URL        string // e.g. http://10.0.0.1:8081, used when SocketPath is empty
	Token      string
	// TokenFile holds the token (trimmed) when Token is empty.
	TokenFile string
}

// Feeder keeps a Proxy's table current: it loads the last stored table at
// start, then long-polls the control plane, storing every new table in
// StatePath before serving it, so a gateway that restarts while the control
// plane is down still serves the last routes it knew.
type Feeder struct {
	Source    Source
	StatePath string
	Apply     func(Table) error
	Log       *slog.Logger

	client *http.Client
	base   string
}

const (
	minBackoff = 500 * time.Millisecond
	maxBackoff = 10 * time.Second
)

// Run restores the stored table, then feeds until ctx ends. It never
// returns because the control plane is unreachable: the gateway keeps
// serving what it has.
func (f *Feeder) Run(ctx context.Context) error {
	if err := f.init(); err != nil {
		return err
	}
	return f.RunFrom(ctx, f.Restore())
}

// Restore applies the last stored table, if there is one, and returns its
// version (-1 without one). The gateway calls it before its listeners
// serve, so a gateway restarted while the control plane is down never
// answers from an empty table.
func (f *Feeder) Restore() int64 {
	t, err := LoadTable(f.StatePath)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			f.Log.Error("read stored route table", "path", f.StatePath, "err", err)
		}
		return -1
	}
	if err := f.Apply(t); err != nil {
		f.Log.Error("stored route table refused", "path", f.StatePath, "err", err)
		return -1
	}
	f.Log.Info("serving stored route table", "version", t.Version, "routes", len(t.Routes))
	return t.Version
}

// RunFrom long-polls the control plane for tables newer than version
// until ctx ends (init must have run).
func (f *Feeder) RunFrom(ctx context.Context, version int64) error {
	backoff := minBackoff
	failing := false
	for ctx.Err() == nil {
		t, changed, err := f.poll(ctx, version)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if !failing {
				f.Log.Warn("control plane unreachable; serving the last route table", "version", version, "err", err)
				failing = true
			}
			select {
			case <-ctx.Done():
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, maxBackoff)
			continue
		}
		if failing {
			f.Log.Info("control plane reachable again")
			failing = false
		}
		backoff = minBackoff
		if !changed {
			continue
		}
		if err := f.Apply(t); err != nil {
			// Keep polling from the old version: a fixed table will come
			// with a new version.
			f.Log.Error("route table refused", "version", t.Version, "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(maxBackoff):
			}
			continue
		}
		version = t.Version
		if err := StoreTable(f.StatePath, t); err != nil {
			f.Log.Error("store route table", "path", f.StatePath, "err", err)
		}
		f.Log.Info("route table updated", "version", t.Version, "routes", len(t.Routes))
	}
	return nil
}

func (f *Feeder) init() error {
	if f.client != nil {
		// Run after Run's caller already initialised it (the certificate
		// reporter shares the client).
		return nil
	}
	if f.Log == nil {
		f.Log = slog.Default()
	}
	tr := &http.Transport{MaxIdleConns: 2, IdleConnTimeout: time.Minute}
	switch {
	case f.Source.SocketPath != "":
		path := f.Source.SocketPath
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}
		f.base = "http://control-plane"
	case f.Source.URL != "":
		f.base = strings.TrimSuffix(f.Source.URL, "/")
		if f.Source.Token == "" && f.Source.TokenFile != "" {
			b, err := os.ReadFile(f.Source.TokenFile)
			if err != nil {
				return fmt.Errorf("gateway token file: %w (gateway_token_unreadable)", err)
			}
			if f.Source.Token = strings.TrimSpace(string(b)); f.Source.Token == "" {
				return fmt.Errorf("gateway token file %s is empty (gateway_token_missing)", f.Source.TokenFile)
			}
		}
	default:
		return errors.New("gateway control plane: set a socket path (--control-socket) or a URL (--control-url) (control_plane_missing)")
	}
	// The long-poll waits ~30 s on the server, so the whole request may
	// take a little longer than that.
	f.client = &http.Client{Transport: tr, Timeout: DefaultPollWait + 15*time.Second}
	return nil
}

// poll asks for a table newer than version; changed is false on 304.
func (f *Feeder) poll(ctx context.Context, version int64) (Table, bool, error) {
	url := f.base + RoutesPath
	if version >= 0 {
		url += "?after=" + strconv.FormatInt(version, 10)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Table{}, false, err
	}
	if f.Source.Token != "" {
		req.Header.Set("Authorization", "Bearer "+f.Source.Token)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return Table{}, false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotModified, http.StatusNoContent:
		return Table{}, false, nil
	default:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return Table{}, false, fmt.Errorf("GET %s: %s: %s", RoutesPath, resp.Status, strings.TrimSpace(string(msg)))
	}
	var t Table
	if err := json.NewDecoder(resp.Body).Decode(&t); err != nil {
		return Table{}, false, fmt.Errorf("decode route table: %w", err)
	}
	return t, true, nil
}

// LoadTable reads a table stored by StoreTable.
func LoadTable(path string) (Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Table{}, err
	}
	var t Table
	if err := json.Unmarshal(b, &t); err != nil {
		return Table{}, fmt.Errorf("decode %s: %w", path, err)
	}
	return t, nil
}

// StoreTable writes t to path atomically (temporary file, fsync, rename),
// so a crash leaves either the old or the new table, never half of one.
func StoreTable(path string, t Table) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".routes-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
