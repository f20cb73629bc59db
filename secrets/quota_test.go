package secrets_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/quota"
	"github.com/slipwayhq/slipway/secrets"
)

// TestService_SecretsQuota: a new stored secret past the team's quota is
// refused with quota_exceeded on name and stores nothing; a new version of
// an existing one is no new secret and passes.
func TestService_SecretsQuota(t *testing.T) {
	t.Parallel()
	b := setup(t)
	must(t, b.st.SetTeamQuotas(b.ctx, b.team, quota.Row(map[quota.Name]int64{quota.Secrets: 1})))
	_, err := b.svc.Set(b.ctx, b.team, b.app.ID, "api-key", []byte("v1"), "user:x")
	must(t, err)
	_, err = b.svc.Set(b.ctx, b.team, b.app.ID, "db-password", []byte("v1"), "user:x")
	var se *secrets.Error
	if !errors.As(err, &se) || se.Code != quota.Code || se.Field != "name" || !strings.Contains(se.Message, "secrets quota is 1") {
		t.Fatalf("second secret: %v, want %s on name", err, quota.Code)
	}
	if list, _ := b.st.ListSecrets(b.ctx, b.team, b.app.ID); len(list) != 1 {
		t.Fatalf("%d secrets stored, want 1", len(list))
	}
	if _, err := b.svc.Set(b.ctx, b.team, b.app.ID, "api-key", []byte("v2"), "user:x"); err != nil {
		t.Fatalf("a new version of a stored secret: %v", err)
	}
}
