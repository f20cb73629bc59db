package build

import (
	"context"
	"fmt"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/memory"
	"golang.org/x/sync/singleflight"
)

// ListHeads returns the repository's branches and their head commits
// (branch name without refs/heads/ -> full hash) with one remote listing,
// the equivalent of `git ls-remote --heads`.
func ListHeads(ctx context.Context, url string, auth Auth) (map[string]string, error) {
	r, err := auth.remote(url)
	if err != nil {
		return nil, err
	}
	var refs []*plumbing.Reference
	if r.protocol == "file" {
		repo, err := openLocal(r)
		if err != nil {
			return nil, err
		}
		iter, err := repo.References()
		if err != nil {
			return nil, unreachable(err, r, auth)
		}
		err = iter.ForEach(func(ref *plumbing.Reference) error {
			refs = append(refs, ref)
			return nil
		})
		if err != nil {
			return nil, unreachable(err, r, auth)
		}
	} else {
		am, err := auth.method(r)
		if err != nil {
			return nil, err
		}
		conn, err := auth.connect(ctx, r)
		if err != nil {
			return nil, err
		}
		defer conn.done()
		rem := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{conn.url}})
		refs, err = rem.ListContext(conn.ctx, &git.ListOptions{Auth: am, ProxyOptions: conn.proxy})
		if err != nil {
			return nil, unreachable(err, r, auth)
		}
	}
	heads := make(map[string]string)
	for _, ref := range refs {
		if ref.Type() == plumbing.HashReference && ref.Name().IsBranch() {
			heads[ref.Name().Short()] = ref.Hash().String()
		}
	}
	return heads, nil
}

// Lister shares branch listings: concurrent calls for the same repository
// and credentials make one remote listing, and a result younger than the
// caller's maxAge is served again, so a sync interval lists each repository
// once however many applications follow it. Cross-process sharing is the
// job queue's business. The zero value is ready to use.
type Lister struct {
	// ListFunc replaces ListHeads; tests count calls with it.
	ListFunc func(ctx context.Context, url string, auth Auth) (map[string]string, error)
	// Now replaces time.Now in tests.
	Now func() time.Time

	group singleflight.Group
	mu    sync.Mutex
	cache map[string]listing
}

const listTimeout = 2 * time.Minute

type listing struct {
	heads map[string]string
	at    time.Time
}

// Heads returns the repository's branch heads, listed at most maxAge ago (0
// always lists, sharing only concurrent calls). The returned map is the
// caller's own copy.
func (l *Lister) Heads(ctx context.Context, url string, auth Auth, maxAge time.Duration) (map[string]string, error) {
	key := url + "\x00" + auth.fingerprint()
	now := l.now()
	if maxAge > 0 {
		l.mu.Lock()
		c, ok := l.cache[key]
		l.mu.Unlock()
		if ok && now.Sub(c.at) <= maxAge {
			return copyHeads(c.heads), nil
		}
	}
	v, err, _ := l.group.Do(key, func() (any, error) {
		list := l.ListFunc
		if list == nil {
			list = ListHeads
		}
		// One caller's cancellation must not fail the others sharing the call.
		// A hung server must not hold every waiter forever either.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), listTimeout)
		defer cancel()
		heads, err := list(lctx, url, auth)
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.cache == nil {
			l.cache = make(map[string]listing)
		}
		at := l.now()
		for k, c := range l.cache {
			if at.Sub(c.at) > time.Hour {
				delete(l.cache, k)
			}
		}
		l.cache[key] = listing{heads: heads, at: at}
		l.mu.Unlock()
		return heads, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list branches: %w", err)
	}
	return copyHeads(v.(map[string]string)), nil
}

func (l *Lister) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func copyHeads(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ResolveCommit returns the commit a source names without checking it out:
// a full pinned commit as is, otherwise the branch head from one listing.
// With it the pipeline computes the source identity, and reuses an image,
// before any checkout.
func ResolveCommit(ctx context.Context, url, branch, commit string, auth Auth) (string, error) {
	if _, err := auth.remote(url); err != nil {
		return "", err
	}
	rev, err := checkRevision(branch, commit)
	if err != nil {
		return "", err
	}
	if rev.pinned {
		return rev.commit.String(), nil
	}
	heads, err := ListHeads(ctx, url, auth)
	if err != nil {
		return "", err
	}
	head, ok := heads[branch]
	if !ok {
		return "", newError(CodeBranchNotFound, "branch", "branch %q does not exist in %s", branch, RedactURL(url))
	}
	return head, nil
}
