package manifest_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/slipwayhq/slipway/manifest"
)

// differentialSources are every TOML manifest in the repository: examples,
// test data, importer inputs and importer outputs (goldens), and the
// benchmark manifest.
func differentialSources(t testing.TB) map[string][]byte {
	t.Helper()
	sources := map[string][]byte{"bigManifest": bigManifest()}
	for _, pattern := range []string{"../examples/*.toml", "testdata/*/*.toml", "testdata/*/*/*.toml", "importer/*/testdata/*.toml", "importer/*/testdata/*.golden"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sources[file] = data
		}
	}
	return sources
}

// fastDecoderCases are documents whose forms the fast decoder handles or
// deliberately leaves to the reflective decoder: both must agree on them.
var fastDecoderCases = []string{
	header,
	header + "[spec]\nservices = [{ name = \"a\", source = { type = \"image\", image = \"x\" } }]\n",
	header + "[[spec.services]]\nname = \"a\"\nsource.type = \"git\"\nsource.repository = { url = \"u\", branch = \"b\" }\n",
	header + "[[spec.services]]\nname = \"a\"\n[spec.services.source.repository]\n[[spec.services]]\nname = \"b\"\n[spec.services.source.repository]\nurl = \"x\"\n",
	header + "[[spec.services]]\nname = \"a\"\n[spec.services.source]\nrepository = {}\n",
	header + "[[spec.services]]\nname = \"a\"\ncommand = []\n[spec.services.environment]\n",
	header + "[[spec.services]]\nname = \"a\"\nenvironment = {}\nreplicas = 0x10\n",
	header + "[[spec.services]]\nname = \"a\"\nreplicas = -0\n[spec.services.healthcheck]\nport = +80\nretries = 1_0\n",
	header + "[[spec.services]]\nname = \"a\"\nreplicas = 9223372036854775807\n",
	header + "[[spec.services]]\nname = \"a\"\nreplicas = \"three\"\n",
	header + "[[spec.services]]\nname = \"a\"\nreplicas = 1.5\n",
	header + "[[spec.services]]\nname = \"a\"\nnope = 1\n",
	header + "[[spec.services]]\nname = \"a\"\nname = \"b\"\n",
	header + "[spec]\n[spec.variables]\na = 1\nb = true\nc = 'lit'\nd = \"\"\"\nmulti\\tline\"\"\"\ne = 1.5\n",
	header + "[spec.variables]\na = 1\n[spec]\nvariables.b = 2\n",
	header + "[spec.environments.prod]\nsync = false\n[spec.environments.prod.variables]\nx = \"y\"\n[spec.environments.staging]\n",
	header + "[spec.environments]\nprod = { branch = \"main\", variables = { a = 1 } }\n",
	header + "[spec.environments.prod]\nbranch = \"main\"\n[spec.environments.prod]\nbranch = \"dev\"\n",
	header + "[[spec.routes]]\nhostname = \"a\"\nport = 99999999999999999999\n",
	header + "[[spec.routes]]\nhostname = \"a\"\nredirect = { to = \"https://x\", preserve_path = false }\n",
	header + "[spec.manifest]\npath = \"a\"\nrepository = \"self\"\nsync = { mode = \"poll\" }\n",
	header + "[spec.manifest]\npath = \"a\"\nrepository = \"other\"\n",
	header + "[spec.manifest]\npath = \"a\"\nrepository = { url = \"u\", token = \"t\" }\n",
	header + "[spec.manifest]\npath = \"a\"\n[spec.manifest.repository]\nurl = 1\n",
	header + "spec.previews.visibility = \"private\"\n",
	header + "[[spec.exports]]\nservice = \"a\"\napplications = [\"b\", 1]\n",
	header + "[[spec.services]]\nname = \"a\"\n[[spec.services.mounts]]\nvolume = \"v\"\n[[spec.services.mounts]]\nvolume = \"w\"\n[[spec.services]]\nname = \"b\"\n[[spec.services.mounts]]\nvolume = \"x\"\n",
	header + "[[spec.services]]\nname = \"a\"\n[spec.services]\nname = \"b\"\n",
	"\ufeff" + header,
	header + "[spec.services]\n",
	"api_version = \"x\"\n[metadata\n",
	"",
}

// compareDecoders decodes data with Decode (the fast decoder first) and
// with the reflective reference decoder, and fails unless the manifests
// are deep-equal or the errors are the same. It reports whether the fast
// decoder decided the document.
func compareDecoders(t *testing.T, data []byte) bool {
	t.Helper()
	got, gotErr := manifest.Decode(data, "toml")
	want, wantErr := manifest.DecodeTOMLReflect(data)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("Decode error %v, reference error %v\n%s", gotErr, wantErr, data)
	}
	if wantErr != nil {
		var ge, we manifest.Errors
		if !errors.As(gotErr, &ge) || !errors.As(wantErr, &we) {
			t.Fatalf("errors are %T and %T, want manifest.Errors", gotErr, wantErr)
		}
		if !reflect.DeepEqual(ge, we) {
			t.Fatalf("Decode errors differ from the reference:\n got %#v\nwant %#v\n%s", ge, we, data)
		}
		return false
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode result differs from the reference:\n got %#v\nwant %#v\n%s", got, want, data)
	}
	_, fast := manifest.DecodeTOMLFast(data)
	return fast
}

func TestDecodeFast_MatchesReference(t *testing.T) {
	t.Parallel()
	fastCount := 0
	sources := differentialSources(t)
	for name, data := range sources {
		t.Run(name, func(t *testing.T) {
			if compareDecoders(t, data) {
				fastCount++
			}
		})
	}
	for i, doc := range fastDecoderCases {
		t.Run("case"+string(rune('A'+i)), func(t *testing.T) { compareDecoders(t, []byte(doc)) })
	}
	// The fast decoder must really decide the valid manifests, or the
	// comparison above only tests the reference against itself.
	if fastCount < 20 {
		t.Errorf("the fast decoder decided only %d of %d sources", fastCount, len(sources))
	}
	if _, ok := manifest.DecodeTOMLFast(bigManifest()); !ok {
		t.Error("the fast decoder gave up on the benchmark manifest")
	}
}

// FuzzDecodeFast holds the fast decoder to the reference on arbitrary
// input.
func FuzzDecodeFast(f *testing.F) {
	for _, doc := range fastDecoderCases {
		f.Add([]byte(doc))
	}
	for _, doc := range fastDecoderForms {
		f.Add([]byte(header + doc))
	}
	for _, data := range differentialSources(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareDecoders(t, data)
	})
}

// BenchmarkDecodeValidate64ServicesReference is the benchmark manifest
// through the reflective decoder, for comparison with the fast one.
func BenchmarkDecodeValidate64ServicesReference(b *testing.B) {
	benchmarkDecoder(b, bigManifest(), manifest.DecodeTOMLReflect)
}

// BenchmarkDecode64Services is decoding alone, without Validate.
func BenchmarkDecode64Services(b *testing.B) {
	data := bigManifest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := manifest.Decode(data, "toml"); err != nil {
			b.Fatal(err)
		}
	}
}

// fastDecoderForms are more TOML forms: empty tables, dotted keys, quoted
// keys, escapes, CRLF, redefinitions and mistyped values.
var fastDecoderForms = []string{
	"[[spec.services]]\nname = \"a\"\n[spec.services.healthcheck]\n[spec.services.resources]\n[spec.services.rollout]\n[spec.services.source.build]\n[spec.services.source.build.args]\n",
	"[spec.previews]\n[spec.manifest]\n[spec.manifest.sync]\n[spec.environments.a.variables]\n",
	"[[spec.services]]\nname = \"a\"\nhealthcheck.type = \"http\"\nhealthcheck.port = 80\nhealthcheck.command = [\"a\"]\nsource.build.args.X = \"1\"\n",
	`[[spec.services]]
"name" = 'lit\n'
[spec."services".environment]
"A.B" = """\
  x\u00e9\t"""
C = '''
multi
line'''
D = "q\"uote" # comment
`,
	"[metadata]\r\nname = \"n\" # c\r\n[spec.variables]\r\na = 'x'\r\n",
	"[spec.variables]\na = 1\n\"a\" = 2\n",
	"[spec.variables]\nx = { a = 1 }\n",
	"[spec.variables]\nx = 2026-01-01\ny = 1e3\nz = [1]\n",
	"[[spec.services]]\nname = \"a\"\nenvironment = { A = \"1\", A = \"2\" }\n",
	"[[spec.services]]\nname = true\n",
	"[[spec.services]]\nname = \"a\"\nreplicas = -5\nreceives_telemetry = true\n[spec.services.resources]\ncpu_millis = \"${{ vars.c }}\"\nmemory_bytes = \"12\"\n",
	"[[spec.services]]\nname = \"a\"\n[spec.services.source]\nrepository = \"self\"\n[spec.services.source.repository]\nurl = \"x\"\n",
	"[[spec.services]]\nname = \"a\"\n[[spec.services.mounts]]\n[spec.services.mounts]\n",
	"[[spec.secrets]]\nname = \"s\"\ngenerate.type = \"rsa\"\ngenerate.bits = 4096\n[spec.secrets.generate]\nbytes = 3\n",
	"[[spec.routes]]\nhostname = \"h\"\n[spec.routes.redirect]\nto = \"x\"\npreserve_path = true\nstatus = 301\n",
	"[metadata]\nname = \"again\"\n",
	"[spec.environments.p]\nsync = 1\n",
	"[spec.environments]\np.branch = \"main\"\np.variables.a = 1\n",
	"spec = { services = [{ name = \"a\" }] }\n",
	"[[spec.exports]]\nservice = \"a\"\napplications = [\"b\",]\npreviews = false\n[[spec.imports]]\napplication = \"x\"\nservice = \"y\"\n",
	"[[spec.services]]\nname = \"a\"\nsource = { type = \"git\", repository = \"self\", build = { type = \"docker\", args = { A = \"b\" } } }\n",
	"[[spec.services]]\nname = \"a\"\nsecrets = [{ name = \"a\", target = \"b\" }, { name = \"c\" }]\n",
	"[[spec.services]]\nname = \"a\"\nsecrets = [{ name = \"a\" }, \"x\"]\n",
	"[[spec.services]]\nname = \"a\"\n[[spec.services.secrets]]\nname = \"b\"\n[[spec.services]]\nname = \"c\"\n[[spec.services.secrets]]\nname = \"d\"\n[spec.services.source.repository]\nbranch = \"main\"\n",
}

func TestDecodeFast_Forms(t *testing.T) {
	t.Parallel()
	for i, doc := range fastDecoderForms {
		for j, prefix := range []string{header, ""} {
			t.Run(strconv.Itoa(i)+"/"+strconv.Itoa(j), func(t *testing.T) { compareDecoders(t, []byte(prefix+doc)) })
		}
	}
}
