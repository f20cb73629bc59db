package build

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLister_Heads(t *testing.T) {
	t.Parallel()
	type bundle struct {
		lister *Lister
		calls  atomic.Int32
		gate   chan struct{}
		now    time.Time
		mu     sync.Mutex
	}
	setup := func(t *testing.T) *bundle {
		b := &bundle{gate: make(chan struct{}), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		b.lister = &Lister{
			ListFunc: func(ctx context.Context, url string, auth Auth) (map[string]string, error) {
				b.calls.Add(1)
				<-b.gate
				if url == "https://example.com/broken.git" {
					return nil, errors.New("listing failed")
				}
				return map[string]string{"main": "abc"}, nil
			},
			Now: func() time.Time {
				b.mu.Lock()
				defer b.mu.Unlock()
				return b.now
			},
		}
		return b
	}

	t.Run("concurrent reads share one listing", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var wg sync.WaitGroup
		results := make(chan map[string]string, 20)
		for range 20 {
			wg.Go(func() {
				heads, err := b.lister.Heads(t.Context(), "https://example.com/app.git", Auth{}, time.Minute)
				if err != nil {
					t.Error(err)
				}
				results <- heads
			})
		}
		// Let every caller reach the shared call before it finishes.
		time.Sleep(100 * time.Millisecond)
		close(b.gate)
		wg.Wait()
		close(results)
		for heads := range results {
			if heads["main"] != "abc" {
				t.Fatalf("heads = %v", heads)
			}
			heads["main"] = "mutated" // each caller owns its copy
		}
		if n := b.calls.Load(); n != 1 {
			t.Fatalf("%d listings, want 1", n)
		}
	})
	t.Run("interval cache", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		close(b.gate)
		url := "https://example.com/app.git"
		for range 3 {
			heads, err := b.lister.Heads(t.Context(), url, Auth{}, time.Minute)
			if err != nil || heads["main"] != "abc" {
				t.Fatalf("heads = %v, %v", heads, err)
			}
		}
		if n := b.calls.Load(); n != 1 {
			t.Fatalf("%d listings within the interval, want 1", n)
		}
		if _, err := b.lister.Heads(t.Context(), url, Auth{Username: "u", Password: "other"}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if n := b.calls.Load(); n != 2 {
			t.Fatalf("other credentials shared a listing (%d calls)", n)
		}
		b.mu.Lock()
		b.now = b.now.Add(2 * time.Minute)
		b.mu.Unlock()
		if _, err := b.lister.Heads(t.Context(), url, Auth{}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if n := b.calls.Load(); n != 3 {
			t.Fatalf("stale listing served (%d calls)", n)
		}
		if _, err := b.lister.Heads(t.Context(), "https://example.com/broken.git", Auth{}, time.Minute); err == nil {
			t.Fatal("listing error was swallowed")
		}
		if _, err := b.lister.Heads(t.Context(), "https://example.com/broken.git", Auth{}, time.Minute); err == nil || b.calls.Load() != 5 {
			t.Fatalf("a failed listing was cached (%d calls, %v)", b.calls.Load(), err)
		}
	})
}

func TestResolveCommit(t *testing.T) {
	t.Parallel()
	b := setupRepo(t)
	got, err := ResolveCommit(t.Context(), b.repo.url(), "topic", "", local)
	if err != nil || got != b.topic {
		t.Fatalf("ResolveCommit(topic) = %s, %v", got, err)
	}
	got, err = ResolveCommit(t.Context(), b.repo.url(), "main", b.first, local)
	if err != nil || got != b.first {
		t.Fatalf("ResolveCommit(pinned) = %s, %v", got, err)
	}
	_, err = ResolveCommit(t.Context(), b.repo.url(), "gone", "", local)
	wantCode(t, err, CodeBranchNotFound)
}

func TestSourceIdentity(t *testing.T) {
	t.Parallel()
	base := Source{URL: "https://example.com/app.git", Commit: "0123456789012345678901234567890123456789", Args: map[string]string{"A": "1", "B": "2"}}
	id := SourceIdentity(base)
	same := base
	same.Dockerfile, same.Context = "./Dockerfile", ""
	same.Args = map[string]string{"B": "2", "A": "1"}
	if SourceIdentity(same) != id {
		t.Fatal("equivalent sources have different identities")
	}
	for name, change := range map[string]func(*Source){
		"url":        func(s *Source) { s.URL = "https://example.com/other.git" },
		"commit":     func(s *Source) { s.Commit = "1123456789012345678901234567890123456789" },
		"dockerfile": func(s *Source) { s.Dockerfile = "web.Dockerfile" },
		"context":    func(s *Source) { s.Context = "web" },
		"arg value":  func(s *Source) { s.Args = map[string]string{"A": "1", "B": "3"} },
		"arg added":  func(s *Source) { s.Args = map[string]string{"A": "1", "B": "2", "C": ""} },
		"arg split":  func(s *Source) { s.Args = map[string]string{"A": "1B=2"} },
		"target":     func(s *Source) { s.Target = "runtime" },
	} {
		s := base
		change(&s)
		if SourceIdentity(s) == id {
			t.Errorf("changing %s keeps the identity", name)
		}
	}
}
