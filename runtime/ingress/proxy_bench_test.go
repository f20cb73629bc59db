package ingress

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
)

// BenchmarkProxy measures one proxied GET through the real handler,
// balancer and backend client to a loopback backend, with keep-alive on
// both sides: net/http (the TLS listener's server and ReverseProxy) and
// fasthttp (the plain-HTTP listeners'). allocs/op is the number to watch
// while tuning; ns/op depends on the machine's load.
func BenchmarkProxy(b *testing.B) {
	backendLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	body := []byte("hello from the backend\n")
	backend := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) })}
	go backend.Serve(backendLn)
	defer backend.Close()

	p := NewProxy(b.Context(), slog.New(slog.NewTextHandler(io.Discard, nil)), &staticResolver{hosts: map[string][]string{"web": {"127.0.0.1"}}})
	if err := p.SetTable(Table{Version: 1, Routes: []Route{{Hostname: "bench.example.com", Visibility: VisibilityPublic,
		Backend: &Backend{Service: "web", Port: backendLn.Addr().(*net.TCPAddr).Port}}}}); err != nil {
		b.Fatal(err)
	}
	servers := map[string]func(net.Listener) (stop func()){
		"net/http": func(ln net.Listener) func() {
			gw := &http.Server{Handler: p.Handler(ListenerHTTP)}
			go gw.Serve(ln)
			return func() { gw.Close() }
		},
		"fasthttp": func(ln net.Listener) func() {
			gw := p.newFastServer(ListenerHTTP, newHandoff(ln.Addr()), false)
			go gw.Serve(ln)
			return func() { gw.Shutdown() }
		},
	}
	for _, name := range []string{"net/http", "fasthttp"} {
		b.Run(name, func(b *testing.B) {
			gwLn, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer servers[name](gwLn)()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			url := "http://" + gwLn.Addr().String() + "/"
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Host = "bench.example.com"
				for pb.Next() {
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		})
	}
}
