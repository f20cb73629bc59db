//go:build !linux

package ingress

import (
	"context"
	"log/slog"
	"net"
)

// loopServer has no event loops outside Linux: fasthttp serves the
// plain-HTTP listeners itself.
type loopServer struct{}

func newLoopServer(*Proxy, *slog.Logger) *loopServer { return nil }

func (*loopServer) add(net.Listener, Listener, bool, *handoff) error { return nil }
func (*loopServer) start() error                                     { return nil }
func (*loopServer) shutdown(context.Context)                         {}
