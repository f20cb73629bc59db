//go:build !linux

package ingress

import (
	"context"
	"log/slog"
	"net"
)

// loopServer has no event loops outside Linux: the net/http server reads
// the plain-HTTP listeners itself (acceptPlain).
type loopServer struct{}

func newLoopServer(*Proxy, *slog.Logger, *server) *loopServer { return nil }

func (*loopServer) add(net.Listener, Listener, bool) error { return nil }
func (*loopServer) start() error                           { return nil }
func (*loopServer) shutdown(context.Context)               {}
