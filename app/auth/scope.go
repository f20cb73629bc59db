package auth

import (
	"fmt"
	"slices"
	"strings"
)

// Scope is one permission a member's role or an API token grants.
type Scope string

// The scopes. Later issues may add more; each must be added to AllScopes and
// given to roles in roleScopes.
const (
	AppsRead      Scope = "apps:read"
	AppsWrite     Scope = "apps:write"
	AppsDeploy    Scope = "apps:deploy"
	AppsDelete    Scope = "apps:delete"
	SecretsWrite  Scope = "secrets:write"
	LogsRead      Scope = "logs:read"
	MembersManage Scope = "members:manage"
	TokensManage  Scope = "tokens:manage"
	// TelemetryGrant lets an environment's telemetry receiver get the
	// daemon's socket, and so every application's telemetry.
	TelemetryGrant Scope = "telemetry:grant"
	// NotificationsManage adds, changes, tests and removes the team's
	// notification destinations.
	NotificationsManage Scope = "notifications:manage"
)

// AllScopes lists every scope in display order.
var AllScopes = []Scope{AppsRead, AppsWrite, AppsDeploy, AppsDelete, SecretsWrite, LogsRead, MembersManage, TokensManage, TelemetryGrant, NotificationsManage}

// Role is a member's role in a team.
type Role string

// The roles, most powerful first.
const (
	RoleOwner     Role = "owner"
	RoleAdmin     Role = "admin"
	RoleDeveloper Role = "developer"
	RoleViewer    Role = "viewer"
)

// Roles lists the roles, most powerful first.
var Roles = []Role{RoleOwner, RoleAdmin, RoleDeveloper, RoleViewer}

// Owners and admins hold the same scopes. What sets an owner apart is not a
// scope but a rule about people (see CanAssign, CanManage): only an owner can
// make, demote or remove an owner, so an admin can never lock the owners out
// or promote themselves past the person who made them admin.
var roleScopes = map[Role][]Scope{
	RoleOwner:     AllScopes,
	RoleAdmin:     AllScopes,
	RoleDeveloper: {AppsRead, AppsWrite, AppsDeploy, LogsRead, SecretsWrite},
	RoleViewer:    {AppsRead, LogsRead},
}

// ParseRole validates a role name.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if _, ok := roleScopes[r]; !ok {
		return "", fmt.Errorf("unknown role %q (want one of owner, admin, developer, viewer)", s)
	}
	return r, nil
}

// ScopesOf returns the scopes a role grants (a copy).
func ScopesOf(r Role) []Scope { return slices.Clone(roleScopes[r]) }

// Has reports whether role r grants scope s.
func (r Role) Has(s Scope) bool { return slices.Contains(roleScopes[r], s) }

// CanAssign reports whether a member with role actor may give role target to
// someone (by invitation or role change).
func (r Role) CanAssign(target Role) bool {
	if !r.Has(MembersManage) {
		return false
	}
	return target != RoleOwner || r == RoleOwner
}

// CanManage reports whether a member with role r may change or remove a
// member who currently has role other.
func (r Role) CanManage(other Role) bool {
	if !r.Has(MembersManage) {
		return false
	}
	return other != RoleOwner || r == RoleOwner
}

// ParseScopes parses scope names (deduplicated, in AllScopes order).
func ParseScopes(names []string) ([]Scope, error) {
	var out []Scope
	for _, n := range names {
		s := Scope(strings.TrimSpace(n))
		if !slices.Contains(AllScopes, s) {
			return nil, fmt.Errorf("unknown scope %q", n)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b Scope) int { return slices.Index(AllScopes, a) - slices.Index(AllScopes, b) })
	return out, nil
}

// Subset returns the first scope of want that have does not contain, or "".
func Subset(want, have []Scope) Scope {
	for _, s := range want {
		if !slices.Contains(have, s) {
			return s
		}
	}
	return ""
}

// Strings converts scopes for storage.
func Strings(scopes []Scope) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return out
}

// scopeMeanings says what each scope lets a member or a token do, for the
// tokens and members pages.
var scopeMeanings = map[Scope]string{
	AppsRead:            "see applications, manifests, deployments, environments and the audit log",
	AppsWrite:           "create and rename applications, save manifests, edit variables, services, routes and environments",
	AppsDeploy:          "deploy, retry, cancel, restore and promote; restart and scale services; create and deploy previews",
	AppsDelete:          "delete applications, environments and previews",
	SecretsWrite:        "set, grant and delete stored secrets, regenerate generated ones (values are never shown)",
	LogsRead:            "read and download services' logs",
	MembersManage:       "invite members, change their roles and remove them",
	TokensManage:        "create and revoke API tokens",
	TelemetryGrant:      "let an environment's telemetry receiver get every application's telemetry",
	NotificationsManage: "add, change, test and remove the team's notification destinations (credentials are never shown)",
}

// Meaning says what s lets its holder do.
func (s Scope) Meaning() string { return scopeMeanings[s] }

// roleMeanings says what each role is for.
var roleMeanings = map[Role]string{
	RoleOwner:     "everything, including making, demoting and removing owners",
	RoleAdmin:     "everything an owner can, except touching owners",
	RoleDeveloper: "build and run applications: read, write, deploy, logs and secrets; no deleting, members or tokens",
	RoleViewer:    "read applications and logs; change nothing",
}

// Meaning says what r is for.
func (r Role) Meaning() string { return roleMeanings[r] }
