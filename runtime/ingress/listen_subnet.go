package ingress

import (
	"fmt"
	"net"
	"net/netip"
)

// listenAddr turns a listen address whose host is a network ("172.20.0.0/16:8000")
// into this host's address on that network ("172.20.0.3:8000"); any other
// address is returned as is.
//
// gatewayctl gives the private and metrics listeners that form: the
// gateway container is connected to every environment's ingress overlay,
// and a listener on all interfaces (":8000") would answer tenants on those
// overlays, handing them private routes and the metrics. Bound to the
// address on the gateway's own bridge, they answer only what Docker
// publishes on the host addresses the operator chose.
func listenAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, nil
	}
	subnet, err := netip.ParsePrefix(host)
	if err != nil {
		return addr, nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", fmt.Errorf("listen on %s: %w", subnet, err)
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		if ip, ok := netip.AddrFromSlice(n.IP); ok && subnet.Contains(ip.Unmap()) {
			return net.JoinHostPort(ip.Unmap().String(), port), nil
		}
	}
	return "", fmt.Errorf("listen on %s: this host has no address on that network (listen_subnet_missing)", subnet)
}
