// Package store is Slipway's Postgres storage: one Store type over a pgx v5
// pool, one file per entity, hand-written SQL with explicit column lists.
// It knows Postgres, not Docker or HTTP: it must not import app,
// pipeline, jobs, runtime, views or forge.
//
// # Tenancy
//
// Every team-scoped method takes teamID right after ctx and every query it
// runs has team_id = $1 as its first WHERE term: an object of another team
// is ErrNotFound, exactly like a missing one. Users and sessions are keyed
// by user id and session id hash; the few lookups keyed by a secret
// (GetInvitationByToken, AcceptInvitation, AuthenticateAPIToken) find the
// team from the secret. Maintenance methods that span teams
// (DeleteExpiredSessions, PruneEvents) say so.
//
// # Errors
//
// ErrNotFound (never a nil error with a zero value), *ConflictError for
// unique violations (errors.Is(err, ErrConflict); Field and Code name what
// collided, e.g. Field "email", Code "email_taken"), ErrLastOwner,
// ErrInvitationExpired, ErrInvitationUsed, *InvalidError for a CHECK
// violation (errors.Is(err, ErrInvalid)), ErrAlreadyCaptured,
// ErrSchemaTooNew/ErrSchemaOutdated, *TransitionError for a refused
// deployment state change (errors.Is(err, ErrInvalidTransition)).
// Every error is wrapped with the operation name.
//
// # Transactions
//
//	err := st.WithTx(ctx, func(tx *store.Store) error {
//		app, err := tx.CreateApplication(ctx, teamID, name)
//		if err != nil {
//			return err
//		}
//		_, err = riverClient.InsertTx(ctx, tx.Tx(), SomeArgs{ID: app.ID}, nil)
//		return err
//	})
//
// WithTx inside WithTx is a savepoint. A statement that fails inside WithTx
// aborts that transaction: return the error (everything rolls back), or
// wrap the statement in a nested WithTx when a failure is expected and the
// transaction must go on. storetest.New gives tests a Store bound to a
// transaction that is rolled back on cleanup.
//
// # API (ids are text with a kind prefix: team_, usr_, inv_, tok_, app_, rev_, env_, dep_)
//
//	New(pool) *Store; OnTx(db, tx) *Store; (*Store).WithTx; Tx(); Pool()
//	Migrate(ctx, pool); CheckSchema(ctx, pool); SchemaVersion(ctx, pool); Migrations()
//	HashToken(token) []byte (sha-256); ShortID(id) string
//
//	teams:        CreateTeam(ctx, name, slug); GetTeam(ctx, teamID); GetTeamBySlug(ctx, slug);
//	              RenameTeam(ctx, teamID, name); DeleteTeam(ctx, teamID)
//	users:        CreateUser(ctx, email, name, passwordHash); GetUser(ctx, userID);
//	              GetUserByEmail(ctx, email) (case-insensitive); UpdateUserName; UpdateUserPassword;
//	              CountUsers(ctx); LockFirstRun(ctx) (inside WithTx, before CountUsers)
//	memberships:  AddMember(ctx, teamID, userID, role); GetMember(ctx, teamID, userID);
//	              ListMembers(ctx, teamID); ListUserTeams(ctx, userID);
//	              UpdateMemberRole(ctx, teamID, userID, role); RemoveMember(ctx, teamID, userID)
//	sessions:     CreateSession(ctx, Session); GetSession(ctx, idHash) (expired = ErrNotFound);
//	              TouchSession(ctx, idHash, expiresAt); SetSessionTeam(ctx, idHash, teamID) (member only);
//	              DeleteSession(ctx, idHash); DeleteUserSessions(ctx, userID, keepIDHash);
//	              DeleteExpiredSessions(ctx, now)
//	invitations:  CreateInvitation(ctx, teamID, InvitationParams); GetInvitation(ctx, teamID, id);
//	              ListPendingInvitations(ctx, teamID); DeleteInvitation(ctx, teamID, id);
//	              GetInvitationByToken(ctx, tokenHash); AcceptInvitation(ctx, tokenHash, userID, now)
//	api tokens:   CreateAPIToken(ctx, teamID, APITokenParams); GetAPIToken(ctx, teamID, id);
//	              ListAPITokens(ctx, teamID) (live ones); RevokeAPIToken(ctx, teamID, id, now);
//	              AuthenticateAPIToken(ctx, tokenHash, now) (updates last_used_at)
//	applications: CreateApplication(ctx, teamID, name); GetApplication(ctx, teamID, id);
//	              GetApplicationByName(ctx, teamID, name); ListApplications(ctx, teamID);
//	              DeleteApplication(ctx, teamID, id) (soft); PurgeApplication(ctx, teamID, id)
//	events:       RecordEvent(ctx, teamID, EventParams); ListEvents(ctx, teamID, EventFilter);
//	              ListEventPage(ctx, teamID, EventFilter); ListEventVerbs(ctx, teamID, appID);
//	              PruneEvents(ctx, cutoff)
//	revisions:    CreateManifestRevision(ctx, teamID, appID, RevisionParams);
//	              GetManifestRevision(ctx, teamID, appID, revision); GetCurrentManifestRevision(ctx, teamID, appID);
//	              ListManifestRevisions(ctx, teamID, appID)
//	environments: CreateEnvironment(ctx, teamID, EnvironmentParams); GetEnvironment(ctx, teamID, id);
//	              GetEnvironmentByName(ctx, teamID, appID, name); GetPreview(ctx, teamID, appID, branch, slot);
//	              ListEnvironments(ctx, teamID, appID);
//	              UpdateEnvironment(ctx, teamID, id, EnvironmentUpdate); DeleteEnvironment(ctx, teamID, id)
//	deployments:  CreateDeployment(ctx, teamID, DeploymentParams) (supersedes a queued one);
//	              GetDeployment(ctx, teamID, id); ListDeployments(ctx, teamID, DeploymentFilter);
//	              LatestSucceededDeployment(ctx, teamID, envID);
//	              TransitionDeployment(ctx, teamID, id, from []DeploymentState, to DeploymentState);
//	              FailDeployment(ctx, teamID, id, code, message);
//	              RecordCapture(ctx, teamID, id, Capture) (once, while capturing);
//	              SetDeploymentSteps(ctx, teamID, id, stepsJSON)
//	hostnames:    SetEnvironmentHostnames(ctx, teamID, envID, hostnames) (the env's whole set);
//	              ListHostnames(ctx, teamID, envID); ReleaseHostnames(ctx, teamID, envID);
//	              NormalizeHostname(h)
//	routes:       SetEnvironmentRoutes(ctx, teamID, envID, routes) (the env's whole set; bumps the version);
//	              DeleteEnvironmentRoutes(ctx, teamID, envID); ListEnvironmentRoutes(ctx, teamID, envID);
//	              RouteTable(ctx) and RouteTableVersion(ctx) (span teams: serve's gateway feed)
//	certificates: ReportRouteCertificates(ctx, certs) (spans teams: the gateway's report via serve);
//	              ListEnvironmentCertificates(ctx, teamID, envID)
//	previews:     GetPreview(ctx, teamID, appID, branch, slot); GetPreviewBySlug(ctx, teamID, appID, slug);
//	              ListPreviews(ctx, teamID, appID); LockPreviewCounts(ctx, teamID, appID) (in WithTx; the
//	              total spans teams for [previews] max_total); MarkPreviewDeleting(ctx, teamID, envID, at);
//	              RecordPreviewVolumes / ListPreviewVolumes(ctx, teamID, envID) (the volume inventory);
//	              LatestDeployment(ctx, teamID, envID)
package store
