package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// manifestTypes are the manifest media types a registry may hold for a
// pushed image; the digest Docker pins is that of the one it pushed.
var manifestTypes = []string{
	"application/vnd.docker.distribution.manifest.v2+json",
	"application/vnd.oci.image.manifest.v1+json",
	"application/vnd.docker.distribution.manifest.list.v2+json",
	"application/vnd.oci.image.index.v1+json",
}

// Prune deletes, from the target's repositories (those under its prefix),
// every manifest whose digest keep does not hold, and returns the
// references it deleted. keep holds digests ("sha256:..."). due, when not
// nil, is asked which of the unreferenced manifests ("repo@digest") may go
// now: the image cleanup lets only those go that stayed unreferenced for a
// grace period, so an image a deployment pushed but has not recorded yet
// survives.
func (t Target) Prune(ctx context.Context, keep map[string]bool, due func([]string) ([]string, error)) ([]string, error) {
	if !t.Enabled() || t.APIURL == "" {
		return nil, nil
	}
	c := &apiClient{base: strings.TrimRight(t.APIURL, "/"), user: t.User, password: t.Password, http: &http.Client{Timeout: 30 * time.Second}}
	unreferenced, err := c.unreferenced(ctx, strings.Trim(t.Prefix, "/"), keep)
	if err != nil && len(unreferenced) == 0 {
		return nil, err
	}
	if due != nil {
		// Marks follow what was seen even when a repository failed to list.
		var derr error
		if unreferenced, derr = due(unreferenced); derr != nil {
			return nil, errors.Join(err, derr)
		}
	}
	var deleted []string
	errs := []error{err}
	for _, ref := range unreferenced {
		repo, digest, _ := strings.Cut(ref, "@")
		if err := c.delete(ctx, repo, digest); err != nil {
			errs = append(errs, err)
			continue
		}
		deleted = append(deleted, ref)
	}
	return deleted, errors.Join(errs...)
}

// unreferenced lists the manifests ("repo@digest") of the repositories
// under prefix whose digest keep does not hold.
func (c *apiClient) unreferenced(ctx context.Context, prefix string, keep map[string]bool) ([]string, error) {
	repos, err := c.catalog(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	var errs []error
	for _, repo := range repos {
		if prefix != "" && !strings.HasPrefix(repo, prefix+"/") {
			continue
		}
		tags, err := c.tags(ctx, repo)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		seen := map[string]bool{}
		for _, tag := range tags {
			digest, err := c.digest(ctx, repo, tag)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if digest == "" || keep[digest] || seen[digest] {
				continue
			}
			seen[digest] = true
			out = append(out, repo+"@"+digest)
		}
	}
	return out, errors.Join(errs...)
}

type apiClient struct {
	base, user, password string
	http                 *http.Client
}

func (c *apiClient) do(ctx context.Context, method, path string, accept []string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	}
	for _, a := range accept {
		req.Header.Add("Accept", a)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("registry %s %s: %w", method, path, err)
	}
	return resp, nil
}

func (c *apiClient) getJSON(ctx context.Context, path string, v any) error {
	resp, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("registry GET %s: %s: %s", path, resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// catalog lists every repository, a page at a time.
func (c *apiClient) catalog(ctx context.Context) ([]string, error) {
	var all []string
	last := ""
	for {
		var out struct {
			Repositories []string `json:"repositories"`
		}
		if err := c.getJSON(ctx, "/v2/_catalog?n="+strconv.Itoa(catalogPage)+"&last="+url.QueryEscape(last), &out); err != nil {
			return nil, err
		}
		all = append(all, out.Repositories...)
		if len(out.Repositories) < catalogPage {
			return all, nil
		}
		last = out.Repositories[len(out.Repositories)-1]
	}
}

func (c *apiClient) tags(ctx context.Context, repo string) ([]string, error) {
	var out struct {
		Tags []string `json:"tags"`
	}
	err := c.getJSON(ctx, "/v2/"+repo+"/tags/list", &out)
	return out.Tags, err
}

func (c *apiClient) digest(ctx context.Context, repo, tag string) (string, error) {
	resp, err := c.do(ctx, http.MethodHead, "/v2/"+repo+"/manifests/"+url.PathEscape(tag), manifestTypes)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return "", nil
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("registry HEAD %s:%s: %s", repo, tag, resp.Status)
	}
	return resp.Header.Get("Docker-Content-Digest"), nil
}

func (c *apiClient) delete(ctx context.Context, repo, digest string) error {
	resp, err := c.do(ctx, http.MethodDelete, "/v2/"+repo+"/manifests/"+digest, nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("registry DELETE %s@%s: %s", repo, digest, resp.Status)
	}
	return nil
}
