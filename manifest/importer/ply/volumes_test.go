package ply_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer"
	"github.com/slipwayhq/slipway/manifest/importer/internal/importtest"
)

// TestImport_VolumesOverBudget: a ply.toml with more volumes than a
// manifest may declare imports with an error naming the limit, keeping the
// first ones, instead of handing out an invalid manifest.
func TestImport_VolumesOverBudget(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("[package]\nname = \"app\"\n")
	for i := range manifest.MaxVolumes + 6 {
		fmt.Fprintf(&b, "[[service]]\nrun = \"redis@7\"\nname = \"r%d\"\n", i)
	}
	res, err := importer.Import(importer.Ply, []byte(b.String()), importtest.Options)
	if err != nil {
		t.Fatal(err)
	}
	importtest.Expect(t, res, []string{fmt.Sprintf("error: service: Slipway allows at most %d volumes", manifest.MaxVolumes)})
	importtest.Fuzz(t, importer.Ply, []byte(b.String()))
	if res.Manifest == nil {
		t.Fatalf("no manifest: %v", res.Diagnostics)
	}
	if n := len(res.Manifest.Spec.Volumes); n != manifest.MaxVolumes {
		t.Errorf("%d volumes, want %d", n, manifest.MaxVolumes)
	}
}
