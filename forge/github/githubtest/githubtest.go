// Package githubtest is a fake GitHub REST API on httptest for tests: the
// few endpoints Slipway calls (installation tokens, installation
// repositories, collaborator permission, issue comments, commit statuses,
// app manifest conversion), with App JWTs and installation tokens checked
// for real, every call recorded, and failures injectable so retries and
// outages can be tested. It is test-only: product code must not import it.
package githubtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/slipwayhq/slipway/forge/github"
)

// Repo is a repository the fake serves.
type Repo struct {
	ID            int64
	FullName      string
	DefaultBranch string
	Private       bool
	// CloneURL is what the listing gives as clone_url; empty means
	// <fake URL>/<full name>.git (which the fake does not serve). Tests that
	// clone point it at a local repository (file://).
	CloneURL string
}

// Comment is an issue comment held by the fake.
type Comment struct {
	ID      int64
	Number  int
	Body    string
	Login   string
	Updates int // how many times it was edited
}

// Status is a commit status the fake received.
type Status struct {
	SHA         string
	State       string
	Context     string
	Description string
	TargetURL   string
}

// Call is one request the fake received.
type Call struct {
	Method string
	Path   string
	Body   string
}

type failure struct {
	method, prefix string
	status         int
	header         http.Header
	left           int
}

// Server is the fake. Its zero value is unusable; use New.
type Server struct {
	URL           string
	AppID         int64
	Slug          string
	Key           *rsa.PrivateKey
	KeyPEM        []byte
	WebhookSecret string
	// BotLogin is the author of the App's comments.
	BotLogin string

	mu            sync.Mutex
	installations map[int64]installation
	tokens        map[string]int64 // token -> installation
	perms         map[string]string
	comments      map[string][]*Comment // "owner/repo" -> comments
	statuses      map[string][]Status   // "owner/repo"
	manifestCodes map[string]bool
	calls         []Call
	failures      []*failure
	down          int // while set, every request answers this status
	nextID        int64
}

type installation struct {
	account string
	repos   []Repo
}

// keyOnce: generating an RSA key costs ~100 ms, so every fake in a test
// binary shares one.
var (
	keyOnce sync.Once
	key     *rsa.PrivateKey
	keyPEM  []byte
)

// New starts a fake closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	keyOnce.Do(func() {
		var err error
		key, err = rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		keyPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	})
	s := &Server{
		AppID: 4242, Slug: "slipway-test", Key: key, KeyPEM: keyPEM,
		WebhookSecret: "whsec-" + randomHex(8), BotLogin: "slipway-test[bot]",
		installations: map[int64]installation{}, tokens: map[string]int64{}, perms: map[string]string{},
		comments: map[string][]*Comment{}, statuses: map[string][]Status{}, manifestCodes: map[string]bool{},
		nextID: 1000,
	}
	srv := httptest.NewServer(s.routes())
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Config is a github.Config pointing at the fake, with its App's key and
// webhook secret.
func (s *Server) Config() github.Config {
	return github.Config{
		APIURL: s.URL + "/", WebURL: s.URL + "/", AppID: s.AppID, AppSlug: s.Slug,
		PrivateKey: s.KeyPEM, WebhookSecret: []byte(s.WebhookSecret),
	}
}

// AddInstallation makes an installation of the App on account, granted
// repos.
func (s *Server) AddInstallation(id int64, account string, repos ...Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.installations[id] = installation{account: account, repos: repos}
}

// SetPermission sets user's permission (admin, maintain, write, triage,
// read, none) on the repository; unset users get 404, as GitHub answers for
// non-collaborators of some repositories.
func (s *Server) SetPermission(fullName, user, permission string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perms[fullName+"|"+user] = permission
}

// AddManifestCode makes code convertible once.
func (s *Server) AddManifestCode(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.manifestCodes[code] = true
}

// Fail makes the next times requests whose method matches and whose path
// starts with prefix answer status with header, before reaching the fake.
func (s *Server) Fail(method, prefix string, status int, times int, header http.Header) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, &failure{method: method, prefix: prefix, status: status, header: header, left: times})
}

// Down makes every request answer status (an outage, say 503) until Up.
func (s *Server) Down(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = status
}

// Up ends the outage Down started.
func (s *Server) Up() {
	s.Down(0)
}

// Calls returns every request received, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CountCalls counts requests with method whose path contains substr.
func (s *Server) CountCalls(method, substr string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Method == method && strings.Contains(c.Path, substr) {
			n++
		}
	}
	return n
}

// Comments returns copies of the comments on the pull request.
func (s *Server) Comments(fullName string, number int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments[fullName] {
		if c.Number == number {
			out = append(out, *c)
		}
	}
	return out
}

// AddComment puts a comment on a pull request as if someone wrote it.
func (s *Server) AddComment(fullName string, number int, login, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.comments[fullName] = append(s.comments[fullName], &Comment{ID: s.nextID, Number: number, Body: body, Login: login})
	return s.nextID
}

// Statuses returns the statuses set on the repository, in order.
func (s *Server) Statuses(fullName string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Status(nil), s.statuses[fullName]...)
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /app/installations/{id}/access_tokens", s.app(s.createToken))
	mux.HandleFunc("GET /app/installations/{id}", s.app(s.getInstallation))
	mux.HandleFunc("GET /installation/repositories", s.inst(s.listRepos))
	mux.HandleFunc("GET /repos/{owner}/{repo}/collaborators/{user}/permission", s.inst(s.permission))
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{number}/comments", s.inst(s.listComments))
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{number}/comments", s.inst(s.createComment))
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/issues/comments/{id}", s.inst(s.editComment))
	mux.HandleFunc("POST /repos/{owner}/{repo}/statuses/{sha}", s.inst(s.createStatus))
	mux.HandleFunc("POST /app-manifests/{code}/conversions", s.convert)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		s.mu.Lock()
		s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, Body: string(body)})
		var fail *failure
		if s.down != 0 {
			fail = &failure{status: s.down}
		}
		for _, f := range s.failures {
			if fail != nil {
				break
			}
			if f.left > 0 && f.method == r.Method && strings.HasPrefix(r.URL.Path, f.prefix) {
				f.left--
				fail = f
				break
			}
		}
		s.mu.Unlock()
		if fail != nil {
			for k, vs := range fail.header {
				for _, v := range vs {
					w.Header().Add(k, v)
				}
			}
			writeJSON(w, fail.status, map[string]string{"message": "injected failure"})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

// app checks the App JWT: RS256, signed by the App's key, issued by its id.
func (s *Server) app(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "A JSON web token could not be decoded"})
			return
		}
		tok, err := jwt.ParseWithClaims(raw, &jwt.RegisteredClaims{}, func(*jwt.Token) (any, error) {
			return &s.Key.PublicKey, nil
		}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(strconv.FormatInt(s.AppID, 10)), jwt.WithExpirationRequired())
		if err != nil || !tok.Valid {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "invalid JWT: " + fmt.Sprint(err)})
			return
		}
		h(w, r)
	}
}

// inst checks an installation token and passes its installation on.
func (s *Server) inst(h func(w http.ResponseWriter, r *http.Request, installationID int64)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "token ")
		s.mu.Lock()
		id, known := s.tokens[tok]
		s.mu.Unlock()
		if !ok || !known {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
			return
		}
		h(w, r, id)
	}
}

func pathID(r *http.Request, name string) int64 {
	id, _ := strconv.ParseInt(r.PathValue(name), 10, 64)
	return id
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) {
	id := pathID(r, "id")
	s.mu.Lock()
	_, ok := s.installations[id]
	tok := "ghs_" + randomHex(16)
	if ok {
		s.tokens[tok] = id
	}
	s.mu.Unlock()
	if !ok {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"token": tok, "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
}

func (s *Server) getInstallation(w http.ResponseWriter, r *http.Request) {
	id := pathID(r, "id")
	s.mu.Lock()
	in, ok := s.installations[id]
	s.mu.Unlock()
	if !ok {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "account": map[string]any{"login": in.account, "type": "Organization"}})
}

func (s *Server) listRepos(w http.ResponseWriter, r *http.Request, installationID int64) {
	s.mu.Lock()
	in := s.installations[installationID]
	s.mu.Unlock()
	perPage, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if perPage <= 0 {
		perPage = 30
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 1)
	start := min((page-1)*perPage, len(in.repos))
	end := min(start+perPage, len(in.repos))
	if end < len(in.repos) {
		w.Header().Set("Link", fmt.Sprintf(`<%s/installation/repositories?per_page=%d&page=%d>; rel="next"`, s.URL, perPage, page+1))
	}
	repos := []map[string]any{}
	for _, rp := range in.repos[start:end] {
		branch := rp.DefaultBranch
		if branch == "" {
			branch = "main"
		}
		clone := rp.CloneURL
		if clone == "" {
			clone = s.URL + "/" + rp.FullName + ".git"
		}
		repos = append(repos, map[string]any{
			"id": rp.ID, "full_name": rp.FullName, "default_branch": branch, "private": rp.Private,
			"clone_url": clone,
		})
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(in.repos), "repositories": repos})
}

// repo answers 404 unless the installation was granted the repository.
func (s *Server) repo(w http.ResponseWriter, r *http.Request, installationID int64) (string, bool) {
	full := r.PathValue("owner") + "/" + r.PathValue("repo")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rp := range s.installations[installationID].repos {
		if rp.FullName == full {
			return full, true
		}
	}
	notFound(w)
	return "", false
}

func (s *Server) permission(w http.ResponseWriter, r *http.Request, installationID int64) {
	full, ok := s.repo(w, r, installationID)
	if !ok {
		return
	}
	user := r.PathValue("user")
	s.mu.Lock()
	perm, ok := s.perms[full+"|"+user]
	s.mu.Unlock()
	if !ok {
		notFound(w)
		return
	}
	// GitHub folds maintain into write (and triage into read) in
	// "permission"; role_name keeps it.
	folded := map[string]string{"maintain": "write", "triage": "read"}[perm]
	if folded == "" {
		folded = perm
	}
	writeJSON(w, http.StatusOK, map[string]any{"permission": folded, "role_name": perm, "user": map[string]any{"login": user}})
}

func (s *Server) commentJSON(c *Comment) map[string]any {
	return map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": c.Login}}
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request, installationID int64) {
	full, ok := s.repo(w, r, installationID)
	if !ok {
		return
	}
	number, _ := strconv.Atoi(r.PathValue("number"))
	out := []map[string]any{}
	for _, c := range s.Comments(full, number) {
		out = append(out, s.commentJSON(&c))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request, installationID int64) {
	full, ok := s.repo(w, r, installationID)
	if !ok {
		return
	}
	var in struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "body is required"})
		return
	}
	number, _ := strconv.Atoi(r.PathValue("number"))
	s.mu.Lock()
	s.nextID++
	c := &Comment{ID: s.nextID, Number: number, Body: in.Body, Login: s.BotLogin}
	s.comments[full] = append(s.comments[full], c)
	out := s.commentJSON(c)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) editComment(w http.ResponseWriter, r *http.Request, installationID int64) {
	full, ok := s.repo(w, r, installationID)
	if !ok {
		return
	}
	var in struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "body is required"})
		return
	}
	id := pathID(r, "id")
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.comments[full] {
		if c.ID == id {
			c.Body = in.Body
			c.Updates++
			out := s.commentJSON(c)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(out)
			return
		}
	}
	notFound(w)
}

func (s *Server) createStatus(w http.ResponseWriter, r *http.Request, installationID int64) {
	full, ok := s.repo(w, r, installationID)
	if !ok {
		return
	}
	var in struct {
		State       string `json:"state"`
		Context     string `json:"context"`
		Description string `json:"description"`
		TargetURL   string `json:"target_url"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": err.Error()})
		return
	}
	switch in.State {
	case "pending", "success", "failure", "error":
	default:
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "state is invalid"})
		return
	}
	st := Status{SHA: r.PathValue("sha"), State: in.State, Context: in.Context, Description: in.Description, TargetURL: in.TargetURL}
	s.mu.Lock()
	s.statuses[full] = append(s.statuses[full], st)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, in)
}

func (s *Server) convert(w http.ResponseWriter, r *http.Request) {
	code := r.PathValue("code")
	s.mu.Lock()
	ok := s.manifestCodes[code]
	delete(s.manifestCodes, code)
	s.mu.Unlock()
	if !ok {
		notFound(w)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"id": s.AppID, "slug": s.Slug, "name": "Slipway Test", "html_url": s.URL + "/apps/" + s.Slug,
		"client_id": "Iv1.test", "client_secret": "client-secret-" + code,
		"webhook_secret": s.WebhookSecret, "pem": string(s.KeyPEM),
	})
}
