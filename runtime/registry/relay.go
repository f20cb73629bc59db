package registry

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Relay forwards every connection accepted on ln to upstream (host:port,
// resolved for each connection: the registry's address on the overlay
// changes when its task is replaced). It returns when ctx ends or ln fails.
func Relay(ctx context.Context, ln net.Listener, upstream string, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	d := net.Dialer{Timeout: 10 * time.Second}
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Go(func() {
			defer c.Close()
			u, err := d.DialContext(ctx, "tcp", upstream)
			if err != nil {
				log.Warn("registry relay: upstream unreachable", "upstream", upstream, "err", err)
				return
			}
			defer u.Close()
			done := make(chan struct{})
			go func() {
				_, _ = io.Copy(u, c)
				closeWrite(u)
				close(done)
			}()
			_, _ = io.Copy(c, u)
			closeWrite(c)
			<-done
		})
	}
}

// closeWrite half-closes a TCP connection so the peer sees the end of
// what was sent while its answer may still come back.
func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		return
	}
	_ = c.Close()
}
