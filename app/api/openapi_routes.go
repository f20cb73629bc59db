package api

import (
	"net/http"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/notify"
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
	{Method: http.MethodGet, Path: "/events", Summary: "The team's audit log, one page newest first", Scope: auth.AppsRead, Status: http.StatusOK, Response: AuditEventList{}, Query: eventListQuery},
	{Method: http.MethodGet, Path: "/tokens", Summary: "List API tokens", Scope: auth.TokensManage, Status: http.StatusOK, Response: TokenList{}},
	{Method: http.MethodPost, Path: "/tokens", Summary: "Create an API token", Scope: auth.TokensManage, Request: TokenCreateRequest{}, Status: http.StatusCreated, Response: CreatedToken{}},
	{Method: http.MethodDelete, Path: "/tokens/:token", Summary: "Revoke an API token", Scope: auth.TokensManage, Status: http.StatusNoContent},
	{Method: http.MethodGet, Path: "/applications", Summary: "List applications by name, all or a page at a time", Scope: auth.AppsRead, Status: http.StatusOK, Response: ApplicationList{}, Query: applicationListQuery},
	{Method: http.MethodPost, Path: "/applications", Summary: "Create an application", Scope: auth.AppsWrite, Request: ApplicationCreateRequest{}, Status: http.StatusCreated, Response: Application{}},
	{Method: http.MethodPost, Path: "/applications/import", Summary: "Translate another platform's file into a manifest", Scope: auth.AppsRead,
		RawRequest: []string{"text/plain"}, Status: http.StatusOK, Response: ImportResponse{}, Query: []QueryParam{
			{"apply", "boolean", "Save the translated manifest (needs apps:write)."},
			{"format", "string", "toml (default) or json: the form of the returned manifest."},
			{"from", "string", "The source dialect (gordon, hakopod, skali, ply or compose); detected when absent."},
			{"filename", "string", "The file's name, to help detection; a Compose file that names no project is named after its directory."},
			{"domain", "string", "Compose: the hostname published ports are routed on (one service: the domain; several: a subdomain each)."},
			{"name", "string", "Application name to use."},
			{"repository", "string", "Repository URL to build from."},
			{"branch", "string", "Branch to build from."},
			{"manifest_path", "string", "Where the manifest will live in the repository."},
		}},
	{Method: http.MethodGet, Path: "/applications/:app", Summary: "Show an application", Scope: auth.AppsRead, Status: http.StatusOK, Response: Application{}},
	{Method: http.MethodDelete, Path: "/applications/:app", Summary: "Delete an application", Scope: auth.AppsDelete, Status: http.StatusNoContent},
	{Method: http.MethodDelete, Path: "/applications/:app/environments/:env", Summary: "Delete an environment (named volumes are retained)", Scope: auth.AppsDelete, Status: http.StatusAccepted, Response: EnvironmentDeleted{}},

	{Method: http.MethodPost, Path: "/applications/:app/repository/reset", Summary: "Make the manifest last read from the repository the saved one again", Scope: auth.AppsWrite, Status: http.StatusOK, Response: RepositoryReset{}},
	{Method: http.MethodPost, Path: "/applications/:app/pull-requests/:number/approve", Summary: "Approve the preview of a pull request from a fork or an author without write permission", Scope: auth.AppsDeploy, Status: http.StatusAccepted, Response: PullRequestApproval{}},
	{Method: http.MethodPost, Path: "/applications/:app/environments/:env/services/:service/restart", Summary: "Restart a running service's tasks (a forced rolling update)", Scope: auth.AppsDeploy, Status: http.StatusAccepted},
	{Method: http.MethodPost, Path: "/applications/:app/environments/:env/services/:service/scale", Summary: "Set a service's replicas (a manifest field edit, or the environment's variable when replicas references one) and deploy the environment", Scope: auth.AppsDeploy, Request: ServiceScaleRequest{}, Status: http.StatusAccepted, Response: ServiceScaled{}},

	{Method: http.MethodPost, Path: "/applications/apply", Summary: "Save a manifest as the next revision (TOML or JSON)", Scope: auth.AppsWrite,
		Request: manifest.Manifest{}, RawRequest: []string{"application/toml"}, Status: http.StatusOK, Response: ApplyResponse{},
		Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodPost, Path: "/applications/plan", Summary: "Plan saving a manifest (TOML or JSON): the diff, environments, rollouts and the spec hash each environment would get; changes nothing", Scope: auth.AppsRead,
		Request: manifest.Manifest{}, RawRequest: []string{"application/toml"}, Status: http.StatusOK, Response: PlanResponse{}},
	{Method: http.MethodGet, Path: "/applications/:app/manifest", Summary: "The saved manifest", Scope: auth.AppsRead, Status: http.StatusOK, Response: Revision{},
		Query: []QueryParam{{"revision", "integer", "This revision instead of the current one."}}},
	{Method: http.MethodGet, Path: "/applications/:app/revisions", Summary: "Saved manifest revisions, newest first", Scope: auth.AppsRead, Status: http.StatusOK, Response: RevisionList{}},
	{Method: http.MethodGet, Path: "/applications/:app/environments", Summary: "List environments (previews are listed by /previews)", Scope: auth.AppsRead, Status: http.StatusOK, Response: EnvironmentList{}},
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
	{Method: http.MethodPost, Path: "/applications/:app/services", Summary: "Add a service", Scope: auth.AppsWrite,
		Request: manifest.Service{}, Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodDelete, Path: "/applications/:app/services/:service", Summary: "Remove a service no job, route or export names", Scope: auth.AppsWrite,
		Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodPut, Path: "/applications/:app/services/:service/files", Summary: "Add a read-only file to a service, or replace the one at its target", Scope: auth.AppsWrite,
		Request: manifest.File{}, Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodDelete, Path: "/applications/:app/services/:service/files", Summary: "Remove a service's file", Scope: auth.AppsWrite,
		Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{{"target", "string", "The file's container path."}, deployQuery}, IfMatch: true},
	{Method: http.MethodPut, Path: "/applications/:app/routes/:route", Summary: "Add or replace a route", Scope: auth.AppsWrite,
		Request: manifest.Route{}, Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodDelete, Path: "/applications/:app/routes/:route", Summary: "Remove a route", Scope: auth.AppsWrite,
		Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodPut, Path: "/applications/:app/jobs/:job", Summary: "Add or replace a job", Scope: auth.AppsWrite,
		Request: manifest.Job{}, Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodDelete, Path: "/applications/:app/jobs/:job", Summary: "Remove a job", Scope: auth.AppsWrite,
		Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodPut, Path: "/applications/:app/exports/:service", Summary: "Export a service, or change who may import it", Scope: auth.AppsWrite,
		Request: ExportSetRequest{}, Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodDelete, Path: "/applications/:app/exports/:service", Summary: "Stop exporting a service", Scope: auth.AppsWrite,
		Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodPut, Path: "/applications/:app/imports/:application/:service", Summary: "Import another application's exported service", Scope: auth.AppsWrite,
		Request: ImportSetRequest{}, BodyOptional: true, Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodDelete, Path: "/applications/:app/imports/:application/:service", Summary: "Remove an import", Scope: auth.AppsWrite,
		Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodPut, Path: "/applications/:app/generated-secrets", Summary: "Replace every generated-secret declaration", Scope: auth.AppsWrite,
		Request: GeneratedSecretDeclarations{}, Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodPut, Path: "/applications/:app/generated-secrets/:name", Summary: "Declare a generated secret, or replace its declaration", Scope: auth.AppsWrite,
		Request: manifest.SecretDeclaration{}, Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodDelete, Path: "/applications/:app/generated-secrets/:name", Summary: "Remove a generated-secret declaration no service or job mounts", Scope: auth.AppsWrite,
		Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodPut, Path: "/applications/:app/environments/:env/visibility", Summary: "Set the strictest visibility an environment's routes get", Scope: auth.AppsWrite,
		Request: VisibilityRequest{}, Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodPut, Path: "/applications/:app/environments/:env/rollback", Summary: "Set whether an environment's failed rollouts roll back automatically", Scope: auth.AppsWrite,
		Request: RollbackRequest{}, Status: http.StatusOK, Response: FieldEditResponse{}, Query: []QueryParam{deployQuery}, IfMatch: true},
	{Method: http.MethodPost, Path: "/applications/:app/rename", Summary: "Rename an application, keeping its identity and resources", Scope: auth.AppsWrite,
		Request: ApplicationRenameRequest{}, Status: http.StatusOK, Response: ApplicationRenamed{}, IfMatch: true},
	{Method: http.MethodPut, Path: "/applications/:app/environments/:env/telemetry", Summary: "Grant or revoke an environment's telemetry socket", Scope: auth.TelemetryGrant,
		Request: TelemetryRequest{}, Status: http.StatusOK, Response: EnvironmentTelemetry{}},

	{Method: http.MethodGet, Path: "/applications/:app/environments/:env/schedules", Summary: "An environment's scheduled jobs and backups with their next run, and the latest job runs", Scope: auth.AppsRead, Status: http.StatusOK, Response: Schedules{}},
	{Method: http.MethodPost, Path: "/applications/:app/environments/:env/jobs/:job/runs", Summary: "Run a scheduled job now", Scope: auth.AppsDeploy, Status: http.StatusAccepted, Response: JobRun{}},
	{Method: http.MethodGet, Path: "/applications/:app/environments/:env/backups", Summary: "An environment's backups, restores and backup target", Scope: auth.AppsRead, Status: http.StatusOK, Response: Backups{}},
	{Method: http.MethodPost, Path: "/applications/:app/environments/:env/backups", Summary: "Back up a volume or a Postgres service now", Scope: auth.AppsDeploy, Request: BackupRequest{}, Status: http.StatusAccepted, Response: Backup{}},
	{Method: http.MethodPost, Path: "/applications/:app/environments/:env/restores", Summary: "Restore a backup of the application into this environment", Scope: auth.AppsDeploy, Request: RestoreRequest{}, Status: http.StatusAccepted, Response: Restore{}},
	{Method: http.MethodPut, Path: "/applications/:app/environments/:env/backup-target", Summary: "Send the environment's backups to an S3-compatible bucket", Scope: auth.SecretsWrite, Request: BackupTargetRequest{}, Status: http.StatusNoContent},
	{Method: http.MethodGet, Path: "/applications/:app/environments/:env/routes", Summary: "The routes an environment serves", Scope: auth.AppsRead, Status: http.StatusOK, Response: EnvironmentRouteList{}},
	{Method: http.MethodGet, Path: "/applications/:app/environments/:env/links", Summary: "An environment's links to other applications", Scope: auth.AppsRead, Status: http.StatusOK, Response: EnvironmentLinks{}},
	{Method: http.MethodPut, Path: "/applications/:app/environments/:env/branch", Summary: "Set the branch an environment follows", Scope: auth.AppsWrite, Request: BranchRequest{}, Status: http.StatusOK, Response: EnvironmentBranch{}},
	{Method: http.MethodPut, Path: "/applications/:app/environments/:env/sync", Summary: "Turn deploying the followed branch's new heads on or off", Scope: auth.AppsWrite, Request: SyncRequest{}, Status: http.StatusOK, Response: EnvironmentSync{}},
	{Method: http.MethodPost, Path: "/applications/:app/environments/:env/promote", Summary: "Promote a release into an environment", Scope: auth.AppsDeploy, Request: PromoteRequest{}, Status: http.StatusAccepted, Response: PromoteResponse{}},
	{Method: http.MethodPost, Path: "/applications/:app/environments", Summary: "Create an environment the manifest does not declare; routes with a literal hostname get one of its own through a variable", Scope: auth.AppsWrite, Request: EnvironmentCreateRequest{}, Status: http.StatusCreated, Response: EnvironmentCreated{}},
	{Method: http.MethodPost, Path: "/applications/:app/environments/:env/rename", Summary: "Rename an environment the manifest does not declare, keeping what runs", Scope: auth.AppsWrite, Request: EnvironmentRenameRequest{}, Status: http.StatusOK, Response: EnvironmentRenamed{}},
	{Method: http.MethodPut, Path: "/applications/:app/environments/:env/source", Summary: "Set where an environment deploys from", Scope: auth.AppsWrite, Request: SourceRequest{}, Status: http.StatusOK, Response: EnvironmentSource{}},
	{Method: http.MethodGet, Path: "/applications/:app/releases", Summary: "List releases", Scope: auth.AppsRead, Status: http.StatusOK, Response: ReleaseList{}, Query: []QueryParam{limitQuery}},

	{Method: http.MethodGet, Path: "/notifications/destinations", Summary: "List the team's notification destinations (credentials never shown)", Scope: auth.AppsRead, Status: http.StatusOK, Response: NotificationDestinationList{}},
	{Method: http.MethodPost, Path: "/notifications/destinations", Summary: "Add a notification destination (webhook, slack, discord or email)", Scope: auth.NotificationsManage, Request: notify.Input{}, Status: http.StatusCreated, Response: NotificationDestination{}},
	{Method: http.MethodGet, Path: "/notifications/destinations/:destination", Summary: "Show a notification destination", Scope: auth.AppsRead, Status: http.StatusOK, Response: NotificationDestination{}},
	{Method: http.MethodPatch, Path: "/notifications/destinations/:destination", Summary: "Change a notification destination (fields left out stay as they are)", Scope: auth.NotificationsManage, Request: notify.Input{}, Status: http.StatusOK, Response: NotificationDestination{}},
	{Method: http.MethodDelete, Path: "/notifications/destinations/:destination", Summary: "Remove a notification destination", Scope: auth.NotificationsManage, Status: http.StatusNoContent},
	{Method: http.MethodPost, Path: "/notifications/destinations/:destination/test", Summary: "Queue a test message to a destination", Scope: auth.NotificationsManage, Status: http.StatusAccepted, Response: NotificationDelivery{}},
	{Method: http.MethodGet, Path: "/notifications/destinations/:destination/deliveries", Summary: "A destination's latest deliveries and their status", Scope: auth.AppsRead, Status: http.StatusOK, Response: NotificationDeliveryList{}},
	{Method: http.MethodGet, Path: "/applications/:app/environments/:env/metrics", Summary: "An environment's usage series: CPU, memory, network and restarts per service; requests, errors and p95 latency per route", Scope: auth.AppsRead, Status: http.StatusOK, Response: MetricsResponse{},
		Query: []QueryParam{{Name: "range", Type: "string", Description: "1h (default), 6h, 24h or 7d"}}},
	{Method: http.MethodGet, Path: "/applications/:app/environments/:env/services/:service/logs", Summary: "A running service's output, merged across replicas in time order, each line naming its task; follow=true streams NDJSON", Scope: auth.LogsRead, Status: http.StatusOK, Response: ServiceLogList{},
		Query: serviceLogsQuery},
	{Method: http.MethodGet, Path: "/applications/:app/secrets", Summary: "List secrets (names, never values)", Scope: auth.AppsRead, Status: http.StatusOK, Response: SecretList{}},
	{Method: http.MethodPut, Path: "/applications/:app/secrets/:name", Summary: "Set a secret", Scope: auth.SecretsWrite, Request: SecretSetRequest{}, Status: http.StatusOK, Response: Secret{}},
	{Method: http.MethodDelete, Path: "/applications/:app/secrets/:name", Summary: "Delete a secret", Scope: auth.SecretsWrite, Status: http.StatusNoContent},
	{Method: http.MethodPut, Path: "/applications/:app/secrets/:name/access", Summary: "Set which environments may read a secret", Scope: auth.SecretsWrite, Request: SecretAccessRequest{}, Status: http.StatusOK, Response: Secret{}},
	{Method: http.MethodGet, Path: "/applications/:app/environments/:env/generated-secrets", Summary: "List an environment's generated secrets", Scope: auth.AppsRead, Status: http.StatusOK, Response: GeneratedSecretList{}},
	{Method: http.MethodPost, Path: "/applications/:app/environments/:env/generated-secrets/:name/regenerate", Summary: "Generate a secret's value again", Scope: auth.SecretsWrite, Status: http.StatusOK, Response: GeneratedSecret{}},
	{Method: http.MethodGet, Path: "/registry-credentials", Summary: "List the team's image registry accounts (hosts and usernames, never passwords)", Scope: auth.AppsRead, Status: http.StatusOK, Response: RegistryCredentialList{}},
	{Method: http.MethodPut, Path: "/registry-credentials/:host", Summary: "Set the team's account on an image registry; its images are pulled with it on every node", Scope: auth.SecretsWrite, Request: RegistryCredentialSetRequest{}, Status: http.StatusOK, Response: RegistryCredential{}},
	{Method: http.MethodDelete, Path: "/registry-credentials/:host", Summary: "Delete the team's account on an image registry", Scope: auth.SecretsWrite, Status: http.StatusNoContent},
	{Method: http.MethodGet, Path: "/nodes", Summary: "The Swarm's nodes: role, availability, state, engine, CPU, memory and Slipway labels (installation admins only)", Status: http.StatusOK, Response: NodeList{}},

	{Method: http.MethodGet, Path: "/applications/:app/previews", Summary: "List previews with their branch states", Scope: auth.AppsRead, Status: http.StatusOK, Response: PreviewList{}},
	{Method: http.MethodPost, Path: "/applications/:app/previews", Summary: "Create (or get) the preview of a branch and slot", Scope: auth.AppsDeploy, Request: PreviewCreateRequest{}, Status: http.StatusCreated, Response: PreviewCreated{}},
	{Method: http.MethodPost, Path: "/applications/:app/previews/local", Summary: "Deploy a local worktree snapshot (git bundle) as the preview of its branch", Scope: auth.AppsDeploy, RawRequest: []string{SnapshotContentType}, Status: http.StatusAccepted, Response: PreviewLocalDeployed{},
		Query: []QueryParam{{"slot", "string", "The preview's slot, so several previews can share a branch."}}},
	{Method: http.MethodPost, Path: "/applications/:app/previews/prune", Summary: "List or delete the previews whose branch is gone", Scope: auth.AppsDelete, Request: PreviewPruneRequest{}, Status: http.StatusOK, Response: PreviewPruneResponse{}},
	{Method: http.MethodGet, Path: "/applications/:app/previews/:slug", Summary: "Show a preview, its branch state and routes", Scope: auth.AppsRead, Status: http.StatusOK, Response: Preview{}},
	{Method: http.MethodDelete, Path: "/applications/:app/previews/:slug", Summary: "Delete a preview with its volumes", Scope: auth.AppsDelete, Status: http.StatusAccepted, Response: Preview{}},
	{Method: http.MethodPost, Path: "/applications/:app/previews/:slug/deploy", Summary: "Redeploy a preview at its branch head", Scope: auth.AppsDeploy, Status: http.StatusAccepted, Response: Deployment{}},
	{Method: http.MethodGet, Path: "/applications/:app/previews/:slug/routes", Summary: "The routes a preview serves", Scope: auth.AppsRead, Status: http.StatusOK, Response: EnvironmentRouteList{}},
	{Method: http.MethodGet, Path: "/applications/:app/previews/:slug/links", Summary: "A preview's links to other applications", Scope: auth.AppsRead, Status: http.StatusOK, Response: EnvironmentLinks{}},
}

// pathParams describes each path parameter by name.
var pathParams = map[string]string{
	"app":         "Application id or name.",
	"env":         "Environment name or id (never a preview's slug: environment_not_found).",
	"token":       "API token id.",
	"deployment":  "Deployment id.",
	"variable":    "Variable name.",
	"service":     "Service name.",
	"route":       "Route name.",
	"job":         "Job name.",
	"application": "Name of the other application.",
	"name":        "Secret name.",
	"slug":        "Preview slug.",
	"host":        "Registry host[:port], such as ghcr.io (docker.io for Docker Hub).",
}
