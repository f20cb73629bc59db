package app

import (
	"context"
	"sync"
	"time"
)

// Limiter decides whether another login attempt for key may proceed. It
// takes a context and returns an error so a shared, database-backed
// limiter can implement it.
type Limiter interface {
	Allow(ctx context.Context, key string) (bool, error)
}

// memoryLimiter is a token bucket per key, in this process's memory.
//
// With several serve processes an attacker gets one bucket per process;
// a Postgres-backed limiter needs a login_attempts table (asked of the
// store's owners) and can replace this through Config.LoginLimiter.
type memoryLimiter struct {
	mu      sync.Mutex
	burst   float64
	refill  time.Duration // time to earn one attempt back
	now     func() time.Time
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewMemoryLimiter allows burst attempts per key, then one per refill.
func NewMemoryLimiter(burst int, refill time.Duration, now func() time.Time) Limiter {
	return &memoryLimiter{burst: float64(burst), refill: refill, now: now, buckets: map[string]*bucket{}}
}

func (l *memoryLimiter) Allow(_ context.Context, key string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[key] = b
		if len(l.buckets) > 100_000 {
			l.prune(now)
		}
	}
	b.tokens = min(l.burst, b.tokens+float64(now.Sub(b.at))/float64(l.refill))
	b.at = now
	if b.tokens < 1 {
		return false, nil
	}
	b.tokens--
	return true, nil
}

// prune drops full buckets so memory stays bounded under a spray of keys.
func (l *memoryLimiter) prune(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+float64(now.Sub(b.at))/float64(l.refill) >= l.burst {
			delete(l.buckets, k)
		}
	}
}
