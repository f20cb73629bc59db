// Package swarmtest gives tests a real Docker Engine to work against: a
// client, images built FROM scratch from the tiny Go programs under
// testdata/images (no image can be pulled where Slipway's tests run), and
// per-test ownership labels with cleanup.
//
//	cli := swarmtest.Client(t)
//	image := swarmtest.Image(t, "web") // slipway-test/web:<content hash>
//	label := swarmtest.Label(t)         // dev.slipway.test=<unique id>, cleaned up
//
// Objects Slipway itself makes carry its labels instead (dev.slipway.team,
// dev.slipway.env): swarmtest.RemoveOnCleanup(t, "dev.slipway.team="+id)
// removes everything carrying a label when the test ends and fails the test
// if anything of it is left. Register it before starting a worker or a
// gateway, so it runs after they stopped: a running worker's drift repair
// would bring removed services back.
//
// Images are tagged by a hash of the program's source and the Go version, so
// a second test (or a second package) reuses the first build. Building runs
// the go toolchain through os/exec, which is acceptable in test helpers only;
// product code never imports this package.
//
// The images:
//
//   - web: HTTP server. PORT (8080), HEALTHY=false fails /health, VERSION is
//     served at /version, DRAIN_SECONDS (2) keeps serving after SIGTERM.
//     Endpoints /health, /version, /whoami, /env/<NAME>, /file?path=, /.
//   - job: job [--cat PATH,...] [--env NAME,...] [--print TEXT]
//     [--print-bytes N] [--sleep S] [--exit CODE]; --cat prints
//     "PATH MODE CONTENT", --env "NAME=VALUE".
//   - hammer: hammer --url URL --duration D [--until-body TEXT]; prints
//     "ok=N failed=M" and exits 1 when any request failed.
//   - reach: GETs every URL of REACH_URLS (comma-separated) side by side
//     every half second and prints "ok URL BODY" or "fail URL: ERROR".
//
// It must not import Postgres or any Slipway package besides the manifest
// types: it is a leaf that every area's tests may use.
package swarmtest
