package service_test

import (
	"context"
	"errors"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/manifest"
)

// TestApplyManifest_FileURLsNeedTheSwitch: a manifest whose git source
// names a file:// repository is refused with file_url_disabled on its url
// (with its line) unless the installation allows file URLs, and nothing is
// saved.
func TestApplyManifest_FileURLsNeedTheSwitch(t *testing.T) {
	t.Parallel()
	b := setupApply(t)
	doc := header + `
[[spec.services]]
name = "web"
[spec.services.source]
type = "git"
repository = { url = "file:///srv/git/notes.git", branch = "main" }
build = { type = "docker" }
`
	_, err := b.apply(t, doc, service.ApplyOptions{})
	var me *service.ManifestError
	if !errors.As(err, &me) || len(me.Errors) != 1 {
		t.Fatalf("apply without the switch: %v, want one manifest error", err)
	}
	if e := me.Errors[0]; e.Path != "spec.services[0].source.repository.url" || e.Code != manifest.CodeFileURLDisabled || e.Line == 0 {
		t.Fatalf("error = %+v, want %s on the url with its line", e, manifest.CodeFileURLDisabled)
	}
	apps, err := b.st.ListApplications(context.Background(), b.actor.TeamID)
	if err != nil || len(apps) != 0 {
		t.Fatalf("a refused apply saved %d applications (%v)", len(apps), err)
	}

	res, err := b.apply(t, doc, service.ApplyOptions{AllowFileURLs: true})
	if err != nil || !res.Created {
		t.Fatalf("apply with the switch: %+v, %v", res, err)
	}
}
