package ingress

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/caddyserver/certmagic"
)

// StoragePath is where serve mounts StorageHandler: the certificate
// storage every gateway shares, so one certificate per hostname is
// obtained once, by whichever gateway takes certmagic's lock first, and
// served by all of them.
const StoragePath = "/internal/gateway/storage/"

// The operations under StoragePath; key (or name, for locks) is a query
// parameter. A missing key is 404.
const (
	storageLoad   = "load"   // GET: the value
	storageStore  = "store"  // PUT: the body becomes the value
	storageDelete = "delete" // DELETE
	storageStat   = "stat"   // GET: certmagic.KeyInfo as JSON
	storageList   = "list"   // GET (&recursive=1): the keys as a JSON array
	// storageLock is POST: answered 200 once the lock is taken, and held
	// until the request ends. The gateway ends it to unlock; a gateway
	// that dies drops its connection, which unlocks too.
	storageLock = "lock"
)

// StorageHandler serves s to gateways under StoragePath (wrap it in
// RequireToken on TCP, as the route feed).
func StorageHandler(s certmagic.Storage, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := strings.TrimPrefix(r.URL.Path, StoragePath)
		key := r.URL.Query().Get("key")
		ctx := r.Context()
		want := map[string]string{storageLoad: http.MethodGet, storageStore: http.MethodPut, storageDelete: http.MethodDelete,
			storageStat: http.MethodGet, storageList: http.MethodGet, storageLock: http.MethodPost}[op]
		if want == "" {
			http.Error(w, "storage_operation_unknown: "+op, http.StatusNotFound)
			return
		}
		if r.Method != want {
			w.Header().Set("Allow", want)
			http.Error(w, "method_not_allowed: use "+want, http.StatusMethodNotAllowed)
			return
		}
		var out any
		var err error
		switch op {
		case storageLoad:
			var v []byte
			if v, err = s.Load(ctx, key); err == nil {
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Write(v)
				return
			}
		case storageStore:
			var v []byte
			if v, err = io.ReadAll(io.LimitReader(r.Body, 1<<20)); err == nil {
				err = s.Store(ctx, key, v)
			}
		case storageDelete:
			err = s.Delete(ctx, key)
		case storageStat:
			out, err = s.Stat(ctx, key)
		case storageList:
			out, err = s.List(ctx, key, r.URL.Query().Get("recursive") == "1")
		case storageLock:
			if err = s.Lock(ctx, key); err == nil {
				w.WriteHeader(http.StatusOK)
				http.NewResponseController(w).Flush()
				<-ctx.Done()
				if err := s.Unlock(context.WithoutCancel(ctx), key); err != nil {
					log.Warn("release certificate lock", "lock", key, "err", err)
				}
				return
			}
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			http.Error(w, "not_found: "+key, http.StatusNotFound)
		case err != nil:
			log.Warn("certificate storage", "op", op, "key", key, "err", err)
			http.Error(w, "storage_failed: "+op+" "+key, http.StatusInternalServerError)
		case out != nil:
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(out)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
}

// remoteStorage is certmagic.Storage on the control plane's StorageHandler,
// reached as the route feed is. What it stores and loads is also kept in
// cache (the gateway's data directory), which answers reads while the
// control plane is unreachable, so a gateway restarted then still serves
// the certificates it had.
type remoteStorage struct {
	base, token string
	client      *http.Client
	cache       certmagic.Storage
	log         *slog.Logger

	mu   sync.Mutex
	held map[string]func() // unlock per lock name
}

var _ certmagic.Storage = (*remoteStorage)(nil)

// newRemoteStorage uses f's control plane (after f.init).
func newRemoteStorage(f *Feeder, cache certmagic.Storage) *remoteStorage {
	tr := f.client.Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 4
	// No client timeout: a lock request lasts as long as the lock.
	return &remoteStorage{base: f.base, token: f.Source.Token, client: &http.Client{Transport: tr}, cache: cache, log: f.Log, held: map[string]func(){}}
}

// errUnreachable marks failures to reach the control plane (not its
// answers), when the cache answers reads instead.
var errUnreachable = errors.New("control plane unreachable")

func (s *remoteStorage) do(ctx context.Context, method, op, key string, extra url.Values, body []byte) (*http.Response, error) {
	q := url.Values{"key": {key}}
	for k, v := range extra {
		q[k] = v
	}
	req, err := http.NewRequestWithContext(ctx, method, s.base+StoragePath+op+"?"+q.Encode(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("certificate storage %s %s: %w: %w", op, key, errUnreachable, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		resp.Body.Close()
		return nil, fmt.Errorf("certificate storage %s %s: %w", op, key, fs.ErrNotExist)
	case resp.StatusCode/100 != 2:
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		err := fmt.Errorf("certificate storage %s %s: %s: %s", op, key, resp.Status, strings.TrimSpace(string(msg)))
		if resp.StatusCode >= 500 {
			err = fmt.Errorf("%w: %w", errUnreachable, err)
		}
		return nil, err
	}
	return resp, nil
}

// read runs op and decodes its answer with decode, falling back to
// cached when the control plane cannot answer.
func read[T any](ctx context.Context, s *remoteStorage, op, key string, extra url.Values, decode func(io.Reader) (T, error), cached func() (T, error)) (T, error) {
	resp, err := s.do(ctx, http.MethodGet, op, key, extra, nil)
	if err != nil {
		if errors.Is(err, errUnreachable) {
			if v, cerr := cached(); cerr == nil {
				return v, nil
			}
		}
		var zero T
		return zero, err
	}
	defer resp.Body.Close()
	return decode(resp.Body)
}

func decodeJSON[T any](r io.Reader) (T, error) {
	var v T
	err := json.NewDecoder(r).Decode(&v)
	return v, err
}

func (s *remoteStorage) Load(ctx context.Context, key string) ([]byte, error) {
	v, err := read(ctx, s, storageLoad, key, nil, io.ReadAll, func() ([]byte, error) { return s.cache.Load(ctx, key) })
	if err == nil {
		if cerr := s.cache.Store(ctx, key, v); cerr != nil {
			s.log.Debug("cache certificate storage key", "key", key, "err", cerr)
		}
	}
	return v, err
}

func (s *remoteStorage) Stat(ctx context.Context, key string) (certmagic.KeyInfo, error) {
	return read(ctx, s, storageStat, key, nil, decodeJSON[certmagic.KeyInfo], func() (certmagic.KeyInfo, error) { return s.cache.Stat(ctx, key) })
}

func (s *remoteStorage) Exists(ctx context.Context, key string) bool {
	_, err := s.Stat(ctx, key)
	return err == nil
}

func (s *remoteStorage) List(ctx context.Context, dir string, recursive bool) ([]string, error) {
	extra := url.Values{}
	if recursive {
		extra.Set("recursive", "1")
	}
	return read(ctx, s, storageList, dir, extra, decodeJSON[[]string], func() ([]string, error) { return s.cache.List(ctx, dir, recursive) })
}

func (s *remoteStorage) Store(ctx context.Context, key string, value []byte) error {
	resp, err := s.do(ctx, http.MethodPut, storageStore, key, nil, value)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if cerr := s.cache.Store(ctx, key, value); cerr != nil {
		s.log.Debug("cache certificate storage key", "key", key, "err", cerr)
	}
	return nil
}

func (s *remoteStorage) Delete(ctx context.Context, key string) error {
	resp, err := s.do(ctx, http.MethodDelete, storageDelete, key, nil, nil)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if resp != nil {
		resp.Body.Close()
	}
	return s.cache.Delete(ctx, key)
}

// Lock holds a request open at the control plane for as long as the lock
// is held; Unlock ends it.
func (s *remoteStorage) Lock(ctx context.Context, name string) error {
	hold, release := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, release)
	resp, err := s.do(hold, http.MethodPost, storageLock, name, nil, nil)
	if !stop() || err != nil {
		release()
		if resp != nil {
			resp.Body.Close()
		}
		if ctx.Err() != nil {
			return fmt.Errorf("certificate lock %s: %w", name, ctx.Err())
		}
		return err
	}
	s.mu.Lock()
	s.held[name] = func() { release(); resp.Body.Close() }
	s.mu.Unlock()
	return nil
}

func (s *remoteStorage) Unlock(_ context.Context, name string) error {
	s.mu.Lock()
	unlock := s.held[name]
	delete(s.held, name)
	s.mu.Unlock()
	if unlock == nil {
		return fmt.Errorf("certificate lock %s is not held here", name)
	}
	unlock()
	return nil
}
