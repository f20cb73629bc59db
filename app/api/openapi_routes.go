package api

import (
	"net/http"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/manifest"
)

// Route describes one /api/v1 endpoint for the OpenAPI document. Every
// route registered under /api/v1 must have an entry in routeTable; a test
// walks the Fiber app to make sure none is forgotten.
type Route struct {
	Method string
	// Path is the Fiber pattern below /api/v1, e.g. /applications/:app.
	Path    string
	Summary string
	// Scope is the token permission needed; "" means any valid token.
	Scope auth.Scope
	// Public routes need no token at all.
	Public bool
	// Request is a value of the JSON body's type (nil: no JSON body).
	Request any
	// RawRequest lists non-JSON content types the body may have instead.
	RawRequest []string
	// BodyOptional routes accept an empty body too.
	BodyOptional bool
	// Status is the success status; Response a value of its body's type
	// (nil: no body, or a body described elsewhere).
	Status   int
	Response any
	Query    []QueryParam
	// IfMatch routes take the edited revision in If-Match.
	IfMatch bool
}

// QueryParam is one query parameter: Type is a JSON Schema type.
type QueryParam struct {
	Name, Type, Description string
}

var (
	deployQuery = QueryParam{"deploy", "boolean", "Also request a deployment of every environment that builds."}
	envQuery    = QueryParam{"env", "string", "Only this environment."}
	limitQuery  = QueryParam{"limit", "integer", "At most this many, newest first."}
)

// routeTable is every /api/v1 route. Keep it in the order of Register.
var routeTable = []Route{
	{Method: http.MethodGet, Path: "/openapi.json", Summary: "This OpenAPI document", Public: true, Status: http.StatusOK},
	{Method: http.MethodGet, Path: "/me", Summary: "Who the token acts for and what it may do", Status: http.StatusOK, Response: Me{}},
	{Method: http.MethodGet, Path: "/teams", Summary: "The token's team", Status: http.StatusOK, Response: TeamList{}},
	{Method: http.MethodGet, Path: "/tokens", Summary: "List API tokens", Scope: auth.TokensManage, Status: http.StatusOK, Response: TokenList{}},
	{Method: http.MethodPost, Path: "/tokens", Summary: "Create an API token", Scope: auth.TokensManage, Request: TokenCreateRequest{}, Status: http.StatusCreated, Response: CreatedToken{}},
	{Method: http.MethodDelete, Path: "/tokens/:token", Summary: "Revoke an API token", Scope: auth.TokensManage, Status: http.StatusNoContent},
	{Method: http.MethodGet, Path: "/applications", Summary: "List applications", Scope: auth.AppsRead, Status: http.StatusOK, Response: ApplicationList{}},
	{Method: http.MethodPost, Path: "/applications", Summary: "Create an application", Scope: auth.AppsWrite, Request: ApplicationCreateRequest{}, Status: http.StatusCreated, Response: Application{}},
	{Method: http.MethodPost, Path: "/applications/import", Summary: "Translate another platform's file into a manifest", Scope: auth.AppsRead,
		RawRequest: []string{"text/plain"}, Status: http.StatusOK, Response: ImportResponse{}, Query: []QueryParam{
			{"apply", "boolean", "Save the translated manifest (needs apps:write)."},
			{"format", "string", "toml (default) or json: the form of the returned manifest."},
			{"from", "string", "The source dialect; detected when absent."},
			{"filename", "string", "The file's name, to help detection."},
			{"name", "string", "Application name to use."},
			{"repository", "string", "Repository URL to build from."},
			{"branch", "string", "Branch to build from."},
			{"manifest_path", "string", "Where the manifest will live in the repository."},
		}},
	{Method: http.MethodGet, Path: "/applications/:app", Summary: "Show an application", Scope: auth.AppsRead, Status: http.StatusOK, Response: Application{}},
	{Method: http.MethodDelete, Path: "/applications/:app", Summary: "Delete an application", Scope: auth.AppsDelete, Status: http.StatusNoContent},
	{Method: http.MethodDelete, Path: "/applications/:app/environments/:env", Summary: "Delete an environment (named volumes are retained)", Scope: auth.AppsDelete, Status: http.StatusAccepted, Response: EnvironmentDeleted{}},

	{Method: http.MethodPost, Path: "/applications/:app/repository/reset", Summary: "Make the manifest last read from the repository the saved one again", Scope: auth.AppsWrite, Status: http.StatusOK, Response: RepositoryReset{}},

	{Method: http.MethodPost, Path: "/applications/apply", Summary: "Save a manifest as the next revision (TOML or JSON)", Scope: auth.AppsWrite,
		Request: manifest.Manifest{}, RawRequest: []string{"application/toml"}, Status: http.StatusOK, Response: ApplyResponse{},
		Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodGet, Path: "/applications/:app/manifest", Summary: "The saved manifest", Scope: auth.AppsRead, Status: http.StatusOK, Response: Revision{},
		Query: []QueryParam{{"revision", "integer", "This revision instead of the current one."}}},
	{Method: http.MethodGet, Path: "/applications/:app/revisions", Summary: "Saved manifest revisions, newest first", Scope: auth.AppsRead, Status: http.StatusOK, Response: RevisionList{}},
	{Method: http.MethodGet, Path: "/applications/:app/environments", Summary: "List environments", Scope: auth.AppsRead, Status: http.StatusOK, Response: EnvironmentList{}},
	{Method: http.MethodPost, Path: "/applications/:app/environments/:env/deploy", Summary: "Deploy an environment's saved manifest", Scope: auth.AppsDeploy, Request: DeployRequest{}, BodyOptional: true, Status: http.StatusAccepted, Response: Deployment{}},
	{Method: http.MethodGet, Path: "/applications/:app/deployments", Summary: "List deployments", Scope: auth.AppsRead, Status: http.StatusOK, Response: DeploymentList{},
		Query: []QueryParam{envQuery, limitQuery}},
	{Method: http.MethodGet, Path: "/applications/:app/status", Summary: "What runs now, per environment", Scope: auth.AppsRead, Status: http.StatusOK, Response: ApplicationStatus{},
		Query: []QueryParam{envQuery}},
	{Method: http.MethodGet, Path: "/deployments/:deployment", Summary: "Show a deployment with its steps and events", Scope: auth.AppsRead, Status: http.StatusOK, Response: Deployment{}},
	{Method: http.MethodPost, Path: "/deployments/:deployment/cancel", Summary: "Cancel an unfinished deployment", Scope: auth.AppsDeploy, Status: http.StatusOK, Response: Deployment{}},
	{Method: http.MethodPost, Path: "/deployments/:deployment/restore", Summary: "Deploy an earlier deployment again, exactly", Scope: auth.AppsDeploy, Status: http.StatusAccepted, Response: Deployment{}},

	{Method: http.MethodPut, Path: "/applications/:app/variables/:variable", Summary: "Set a variable (of one environment with ?env=)", Scope: auth.AppsWrite,
		Request: VariableSetRequest{}, Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{envQuery, deployQuery}, IfMatch: true},
	{Method: http.MethodDelete, Path: "/applications/:app/variables/:variable", Summary: "Remove a variable (of one environment with ?env=)", Scope: auth.AppsWrite,
		Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{envQuery, deployQuery}, IfMatch: true},
	{Method: http.MethodPatch, Path: "/applications/:app/services/:service", Summary: "Change a service's replicas, image or environment", Scope: auth.AppsWrite,
		Request: ServiceUpdateRequest{}, Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodPost, Path: "/applications/:app/services/:service/rename", Summary: "Rename a service, repointing what names it", Scope: auth.AppsWrite,
		Request: ServiceRenameRequest{}, Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},

	{Method: http.MethodGet, Path: "/applications/:app/environments/:env/routes", Summary: "The routes an environment serves", Scope: auth.AppsRead, Status: http.StatusOK, Response: EnvironmentRouteList{}},
	{Method: http.MethodPut, Path: "/applications/:app/environments/:env/branch", Summary: "Set the branch an environment follows", Scope: auth.AppsWrite, Request: BranchRequest{}, Status: http.StatusOK, Response: EnvironmentBranch{}},
	{Method: http.MethodPost, Path: "/applications/:app/environments/:env/promote", Summary: "Promote a release into an environment", Scope: auth.AppsDeploy, Request: PromoteRequest{}, Status: http.StatusAccepted, Response: PromoteResponse{}},
	{Method: http.MethodPut, Path: "/applications/:app/environments/:env/source", Summary: "Set where an environment deploys from", Scope: auth.AppsWrite, Request: SourceRequest{}, Status: http.StatusOK, Response: EnvironmentSource{}},
	{Method: http.MethodGet, Path: "/applications/:app/releases", Summary: "List releases", Scope: auth.AppsRead, Status: http.StatusOK, Response: ReleaseList{}, Query: []QueryParam{limitQuery}},

	{Method: http.MethodGet, Path: "/applications/:app/secrets", Summary: "List secrets (names, never values)", Scope: auth.AppsRead, Status: http.StatusOK, Response: SecretList{}},
	{Method: http.MethodPut, Path: "/applications/:app/secrets/:name", Summary: "Set a secret", Scope: auth.SecretsWrite, Request: SecretSetRequest{}, Status: http.StatusOK, Response: Secret{}},
	{Method: http.MethodDelete, Path: "/applications/:app/secrets/:name", Summary: "Delete a secret", Scope: auth.SecretsWrite, Status: http.StatusNoContent},
	{Method: http.MethodPut, Path: "/applications/:app/secrets/:name/access", Summary: "Set which environments may read a secret", Scope: auth.SecretsWrite, Request: SecretAccessRequest{}, Status: http.StatusOK, Response: Secret{}},
	{Method: http.MethodGet, Path: "/applications/:app/environments/:env/generated-secrets", Summary: "List an environment's generated secrets", Scope: auth.AppsRead, Status: http.StatusOK, Response: GeneratedSecretList{}},
	{Method: http.MethodPost, Path: "/applications/:app/environments/:env/generated-secrets/:name/regenerate", Summary: "Generate a secret's value again", Scope: auth.SecretsWrite, Status: http.StatusOK, Response: GeneratedSecret{}},
}

// pathParams describes each path parameter by name.
var pathParams = map[string]string{
	"app":        "Application id or name.",
	"env":        "Environment name.",
	"token":      "API token id.",
	"deployment": "Deployment id.",
	"variable":   "Variable name.",
	"service":    "Service name.",
	"name":       "Secret name.",
}
