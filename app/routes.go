package app

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/filesystem"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/static"
)

// routes registers every route of the dashboard, the API and the
// endpoints beside them, in the order their middleware applies.
func (h *handler) routes(f *fiber.App, cfg Config) {
	f.Use(recover.New(), h.securityHeaders, h.forgetAfterChange)
	f.Use("/static", filesystem.New(filesystem.Config{Root: http.FS(static.FS), MaxAge: 3600}))
	f.Get("/healthz", h.healthShow)
	f.Get(schemaPath, h.manifestSchema)

	if cfg.Webhook != nil {
		f.Post("/webhooks/github", adaptor.HTTPHandler(cfg.Webhook))
	}
	if cfg.Metrics != nil {
		f.Get("/metrics", adaptor.HTTPHandler(cfg.Metrics))
	}
	api.Register(f.Group("/api/v1"), api.Config{Store: cfg.Store, AuthCache: cfg.AuthCache, Logger: cfg.Logger, Now: cfg.Now, Jobs: cfg.Jobs, Runtime: cfg.Runtime, Secrets: cfg.Secrets, Previews: cfg.Previews, AllowFileURLs: cfg.AllowFileURLs, Notifications: cfg.Notifications, Logs: cfg.Logs})

	// Everything below is the dashboard: sessions, then CSRF on unsafe methods.
	f.Use(h.loadSession, h.checkCSRF)
	f.Get("/", h.homeShow)
	f.Get("/setup", h.setupShow)
	f.Post("/setup", h.setupCreate)
	f.Get("/login", h.loginShow)
	f.Post("/login", h.loginCreate)
	f.Post("/logout", h.logoutCreate)
	f.Get("/invitations/:secret", h.invitationShow)
	f.Post("/invitations/:secret/accept", h.invitationAccept)

	f.Get("/account", h.requireUser, h.accountShow)
	f.Post("/account/password", h.requireUser, h.accountPassword)
	f.Post("/teams", h.requireUser, h.teamCreate)
	f.Post("/teams/:team/switch", h.requireUser, h.teamSwitch)

	f.Get("/applications", h.requireScope(auth.AppsRead), h.applicationList)
	f.Get("/search", h.requireScope(auth.AppsRead), h.searchShow)
	f.Post("/applications", h.requireScope(auth.AppsWrite), h.applicationCreate)
	f.Get("/applications/import", h.requireScope(auth.AppsRead), h.applicationImportShow)
	f.Post("/applications/import", h.requireScope(auth.AppsRead), h.applicationImport)
	f.Get("/applications/:app/delete", h.requireScope(auth.AppsDelete), h.applicationDeleteForm)
	f.Post("/applications/:app/delete", h.requireScope(auth.AppsDelete), h.applicationDelete)
	f.Post("/manifest/validate", h.requireScope(auth.AppsRead), h.manifestValidate)
	f.Post("/manifest/plan", h.requireScope(auth.AppsRead), h.manifestPlan)
	f.Post("/manifest", h.requireScope(auth.AppsWrite), h.manifestSave)
	f.Get("/applications/:app", h.requireScope(auth.AppsRead), h.applicationShow)
	f.Get("/applications/:app/manifest", h.requireScope(auth.AppsRead), h.manifestShow)
	f.Get("/applications/:app/deployments", h.requireScope(auth.AppsRead), h.deploymentList)
	f.Get("/applications/:app/deployments/:deployment", h.requireScope(auth.AppsRead), h.deploymentShow)
	f.Post("/applications/:app/deployments/:deployment/cancel", h.requireScope(auth.AppsDeploy), h.deploymentCancel)
	f.Post("/applications/:app/deployments/:deployment/retry", h.requireScope(auth.AppsDeploy), h.deploymentRetry)
	f.Post("/applications/:app/deployments/:deployment/restore", h.requireScope(auth.AppsDeploy), h.deploymentRestore)
	f.Get("/applications/:app/environments", h.requireScope(auth.AppsRead), h.environmentList)
	f.Post("/applications/:app/environments/:environment/deploy", h.requireScope(auth.AppsDeploy), h.environmentDeploy)
	f.Get("/applications/:app/environments/:environment/promote", h.requireScope(auth.AppsRead), h.environmentPromote)
	f.Post("/applications/:app/environments/:environment/promote", h.requireScope(auth.AppsDeploy), h.environmentPromote)
	f.Post("/applications/:app/environments/:environment/promote-from", h.requireScope(auth.AppsWrite), h.environmentPromoteFrom)
	f.Get("/applications/:app/events", h.requireScope(auth.AppsRead), h.eventList)
	f.Get("/applications/:app/previews", h.requireScope(auth.AppsRead), h.previewList)
	f.Post("/applications/:app/previews", h.requireScope(auth.AppsDeploy), h.previewCreate)
	f.Post("/applications/:app/previews/:slug/deploy", h.requireScope(auth.AppsDeploy), h.previewDeploy)
	f.Post("/applications/:app/previews/:slug/delete", h.requireScope(auth.AppsDelete), h.previewDelete)
	f.Get("/applications/:app/links", h.requireScope(auth.AppsRead), h.linkList)
	f.Post("/applications/:app/links/exports", h.requireScope(auth.AppsWrite), h.exportSet)
	f.Post("/applications/:app/links/exports/remove", h.requireScope(auth.AppsWrite), h.exportRemove)
	f.Post("/applications/:app/links/imports", h.requireScope(auth.AppsWrite), h.importSet)
	f.Post("/applications/:app/links/imports/remove", h.requireScope(auth.AppsWrite), h.importRemove)
	f.Post("/applications/:app/environments/:environment/branch", h.requireScope(auth.AppsWrite), h.environmentBranchUpdate)
	f.Post("/applications/:app/environments/:environment/delete", h.requireScope(auth.AppsDelete), h.environmentDelete)
	f.Post("/applications/:app/environments", h.requireScope(auth.AppsWrite), h.environmentCreate)
	f.Post("/applications/:app/environments/:environment/rename", h.requireScope(auth.AppsWrite), h.environmentRename)
	f.Get("/applications/:app/settings", h.requireScope(auth.AppsRead), h.applicationSettings)
	f.Post("/applications/:app/settings/rename", h.requireScope(auth.AppsWrite), h.applicationRename)
	f.Post("/applications/:app/settings/delete", h.requireScope(auth.AppsDelete), h.applicationDeleteConfirmed)
	f.Post("/applications/:app/variables", h.requireScope(auth.AppsWrite), h.variableSet)
	f.Post("/applications/:app/variables/unset", h.requireScope(auth.AppsWrite), h.variableUnset)
	f.Post("/applications/:app/services/:service/environment", h.requireScope(auth.AppsWrite), h.serviceEnvironmentEdit)
	f.Post("/applications/:app/environments/:environment/settings", h.requireScope(auth.AppsWrite), h.environmentSettingUpdate)
	f.Get("/applications/:app/environments/:environment/services/:service/logs", h.requireScope(auth.LogsRead), h.serviceLogShow)
	f.Get("/applications/:app/environments/:environment/services/:service/logs/download", h.requireScope(auth.LogsRead), h.serviceLogDownload)
	f.Get("/applications/:app/environments/:environment/services/:service/logs/stream", h.requireScope(auth.LogsRead), h.serviceLogStream)
	f.Post("/applications/:app/environments/:environment/services/:service/restart", h.requireScope(auth.AppsDeploy), h.serviceRestart)
	f.Post("/applications/:app/environments/:environment/services/:service/scale", h.requireScope(auth.AppsDeploy), h.serviceScale)
	f.Get("/applications/:app/environments/:environment/daytwo", h.requireScope(auth.AppsRead), h.environmentDayTwo)
	f.Post("/applications/:app/environments/:environment/daytwo/jobs/:job/run", h.requireScope(auth.AppsDeploy), h.environmentJobRun)
	f.Post("/applications/:app/environments/:environment/daytwo/backups", h.requireScope(auth.AppsDeploy), h.environmentBackupCreate)
	f.Post("/applications/:app/environments/:environment/daytwo/restores", h.requireScope(auth.AppsDeploy), h.environmentRestoreCreate)
	f.Get("/applications/:app/secrets", h.requireScope(auth.AppsRead), h.secretList)
	f.Post("/applications/:app/secrets", h.requireScope(auth.SecretsWrite), h.secretSet)
	f.Post("/applications/:app/secrets/:name/access", h.requireScope(auth.SecretsWrite), h.secretAccess)
	f.Post("/applications/:app/secrets/:name/delete", h.requireScope(auth.SecretsWrite), h.secretDelete)
	f.Post("/applications/:app/environments/:environment/generated-secrets/:name/regenerate", h.requireScope(auth.SecretsWrite), h.generatedSecretRegenerate)
	f.Post("/applications/:app/generated-secrets", h.requireScope(auth.AppsWrite), h.generatedSecretDeclare)
	f.Post("/applications/:app/generated-secrets/:name/remove", h.requireScope(auth.AppsWrite), h.generatedSecretUndeclare)

	f.Get("/events", h.requireScope(auth.AppsRead), h.teamEventList)
	f.Get("/quotas", h.requireTeam, h.teamQuotaShow)
	f.Get("/members", h.requireTeam, h.memberList)
	f.Post("/members/invitations", h.requireScope(auth.MembersManage), h.invitationCreate)
	f.Post("/members/invitations/:invitation/revoke", h.requireScope(auth.MembersManage), h.invitationRevoke)
	f.Post("/members/:user/role", h.requireScope(auth.MembersManage), h.memberUpdate)
	f.Post("/members/:user/remove", h.requireScope(auth.MembersManage), h.memberRemove)

	f.Get("/registry-credentials", h.requireScope(auth.AppsRead), h.registryCredentialList)
	f.Post("/registry-credentials", h.requireScope(auth.SecretsWrite), h.registryCredentialSet)
	f.Post("/registry-credentials/:host/delete", h.requireScope(auth.SecretsWrite), h.registryCredentialDelete)

	f.Get("/nodes", h.requireUser, h.nodeList)

	f.Get("/tokens", h.requireTeam, h.tokenList)
	f.Post("/tokens", h.requireScope(auth.TokensManage), h.tokenCreate)
	f.Post("/tokens/:token/revoke", h.requireScope(auth.TokensManage), h.tokenRevoke)
	registerGitHub(f, h, cfg.GitHub)
	registerUsage(f, h)
	registerNotifications(f, h)
}
