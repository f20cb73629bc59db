package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/slipwayhq/slipway/app/api"
)

func secretPath(app, name string) string {
	return "/applications/" + url.PathEscape(app) + "/secrets/" + url.PathEscape(name)
}

// Secrets lists an application's stored secrets: names, versions and
// access, never values.
func (c *Client) Secrets(ctx context.Context, app string) ([]api.Secret, error) {
	var l api.SecretList
	return l.Secrets, c.Do(ctx, http.MethodGet, "/applications/"+url.PathEscape(app)+"/secrets", nil, &l)
}

// SetSecret stores a new version of a secret. Environments and Previews,
// when non-nil, replace its access list in the same request.
func (c *Client) SetSecret(ctx context.Context, app, name string, value []byte, environments *[]string, previews *bool) (api.Secret, error) {
	v := string(value)
	var s api.Secret
	return s, c.Do(ctx, http.MethodPut, secretPath(app, name), api.SecretSetRequest{Value: &v, Environments: environments, Previews: previews}, &s)
}

// DeleteSecret deletes a stored secret.
func (c *Client) DeleteSecret(ctx context.Context, app, name string) error {
	return c.Do(ctx, http.MethodDelete, secretPath(app, name), nil, nil)
}

// SetSecretAccess replaces who may mount a stored secret.
func (c *Client) SetSecretAccess(ctx context.Context, app, name string, req api.SecretAccessRequest) (api.Secret, error) {
	var s api.Secret
	return s, c.Do(ctx, http.MethodPut, secretPath(app, name)+"/access", req, &s)
}

func generatedPath(app, env string) string {
	return "/applications/" + url.PathEscape(app) + "/environments/" + url.PathEscape(env) + "/generated-secrets"
}

// GeneratedSecrets lists an environment's generated values: metadata only.
func (c *Client) GeneratedSecrets(ctx context.Context, app, env string) ([]api.GeneratedSecret, error) {
	var l api.GeneratedSecretList
	return l.GeneratedSecrets, c.Do(ctx, http.MethodGet, generatedPath(app, env), nil, &l)
}

// RegenerateSecret asks the environment's next deployment for a new value.
func (c *Client) RegenerateSecret(ctx context.Context, app, env, name string) (api.GeneratedSecret, error) {
	var g api.GeneratedSecret
	return g, c.Do(ctx, http.MethodPost, generatedPath(app, env)+"/"+url.PathEscape(name)+"/regenerate", nil, &g)
}

func registryCredentialPath(host string) string {
	return "/registry-credentials/" + url.PathEscape(host)
}

// RegistryCredentials lists the team's image registry accounts: hosts and
// usernames, never passwords.
func (c *Client) RegistryCredentials(ctx context.Context) ([]api.RegistryCredential, error) {
	var l api.RegistryCredentialList
	return l.RegistryCredentials, c.Do(ctx, http.MethodGet, "/registry-credentials", nil, &l)
}

// SetRegistryCredential stores the team's account on a registry.
func (c *Client) SetRegistryCredential(ctx context.Context, host, username string, password []byte) (api.RegistryCredential, error) {
	pw := string(password)
	var rc api.RegistryCredential
	return rc, c.Do(ctx, http.MethodPut, registryCredentialPath(host), api.RegistryCredentialSetRequest{Username: username, Password: &pw}, &rc)
}

// DeleteRegistryCredential removes the team's account on a registry.
func (c *Client) DeleteRegistryCredential(ctx context.Context, host string) error {
	return c.Do(ctx, http.MethodDelete, registryCredentialPath(host), nil, nil)
}
