package main

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/slipwayhq/slipway/config"
	"github.com/slipwayhq/slipway/outbound"
)

// TestNotificationDial_Checked: the worker's deliveries dial through the
// outbound-address check, so a destination on loopback is refused unless
// the operator allows its network.
func TestNotificationDial_Checked(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ctx := context.Background()

	_, err = notificationDial(config.Default())(ctx, "tcp", ln.Addr().String())
	var refused *outbound.Error
	if !errors.As(err, &refused) {
		t.Fatalf("dial %s with the default settings: %v, want %s", ln.Addr(), err, outbound.Code)
	}

	cfg := config.Default()
	cfg.Security.AllowedOutboundNetworks = []string{"127.0.0.0/8"}
	conn, err := notificationDial(cfg)(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial %s with 127.0.0.0/8 allowed: %v", ln.Addr(), err)
	}
	conn.Close()
}
