package ply_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/manifest/importer"
	"github.com/slipwayhq/slipway/manifest/importer/internal/importtest"
)

// paramChain is an app whose n computed params each read the next one and
// add link, declared first to last, so the last one to settle is read first.
func paramChain(n int, link, last string) []byte {
	var b strings.Builder
	b.WriteString("[package]\nname = \"app\"\n[run.params]\n")
	for i := range n {
		fmt.Fprintf(&b, "p%05d = \"{p%05d}%s\"\n", i, i+1, link)
	}
	fmt.Fprintf(&b, "p%05d = %q\n[run.env]\nFIRST = \"{p00000}\"\n", n, last)
	return []byte(b.String())
}

func TestImport_ComputedParams(t *testing.T) {
	t.Parallel()
	const app = "[package]\nname = \"app\"\n[run.params]\n"
	first := func(want string) func(t *testing.T, m *manifest.Manifest) {
		return func(t *testing.T, m *manifest.Manifest) {
			if got := m.Spec.Services[0].Environment["FIRST"]; got != want {
				t.Errorf("FIRST = %.80q, want %.80q", got, want)
			}
		}
	}
	computedErr := func(keys ...string) []string {
		var out []string
		for _, k := range keys {
			out = append(out, "error: run.params."+k+": the computed param")
		}
		return out
	}
	runMappings(t, []mapping{
		{name: "reads a later param", src: app + "a = \"{b}/x\"\nb = \"{name}\"\n[run.env]\nFIRST = \"{a}\"\n", check: first("app/x")},
		{name: "reads a preset", src: app + "a = \"{host}:1\"\n[run.env]\nFIRST = \"{a}\"\n", check: first("app:1")},
		{name: "cycle", src: app + "a = \"{b}\"\nb = \"{a}\"\n", diags: computedErr("a", "b")},
		{name: "reads itself", src: app + "a = \"{a}\"\n", diags: computedErr("a")},
		{name: "reads a failed param", src: app + "a = \"{b}\"\nb = \"{nope}\"\n", diags: computedErr("b")},
		// ply resolves a computed param only where it is read: a secret
		// inside one nothing reads is fine (postgres's own url).
		{name: "unread secret inside", src: app + "pw = { secret = true }\nurl = \"x://{pw}@{host}\"\n[run.env]\nFIRST = \"{name}\"\n", check: first("app")},
		{name: "read secret inside", src: app + "pw = { secret = true }\nurl = \"x://{pw}@{host}\"\n[run.env]\nFIRST = \"{url}\"\n", diags: []string{"error: run.env.FIRST: {pw} is a secret inside a longer value"}},
		{name: "live value", src: app + "a = \"{state}\"\n", diags: computedErr("a")},
		{name: "another app's param", src: app + "a = \"{db.url}\"\n", diags: computedErr("a")},
		{name: "unavailable fact", src: app + "[run.env]\nFIRST = \"{port}\"\n", diags: []string{"error: run.env.FIRST: {port} is not available here"}},
		{name: "escaped braces", src: app + "a = \"{{b}}{name}\"\n[run.env]\nFIRST = \"{a}\"\n", check: first("{b}app")},
		{name: "deep chain", src: string(paramChain(2000, "-", "end")), check: first("end" + strings.Repeat("-", 2000))},
	})
}

// BenchmarkImport_ComputedParams imports chains of computed params declared
// in the worst order for a pass-by-pass resolver. Each param settles once,
// so ns/op grows about linearly with n (it grew with n² before: 800 params
// took ~0.35 s, which stalled the fuzzer on such inputs). The links add
// nothing, so the values stay short. What still grows faster than n at
// 1600 params is go-toml's duplicate-key check while parsing the table,
// shared by every TOML importer.
func BenchmarkImport_ComputedParams(b *testing.B) {
	for _, n := range []int{100, 400, 1600} {
		src := paramChain(n, "", "end")
		b.Run(fmt.Sprintf("params=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := importer.Import(importer.Ply, src, importtest.Options); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
