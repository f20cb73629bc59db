package app

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/service"
)

// bodyLimitFor sets each request's body limit from its header, before the
// server reads the body: local preview uploads may send up to
// service.MaxSnapshotBytes, every other request BodyLimit (the server's
// default). The server refuses a longer body with 413 on its announced
// length alone, or as soon as a chunked body passes the limit, so no route
// buffers more than its own limit.
func bodyLimitFor(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	path := h.RequestURI()
	if i := bytes.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if api.TakesSnapshotUpload(string(h.Method()), string(path)) {
		return fasthttp.RequestConfig{MaxRequestBodySize: service.MaxSnapshotBytes}
	}
	return fasthttp.RequestConfig{}
}
