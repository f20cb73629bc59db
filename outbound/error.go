package outbound

import (
	"fmt"
	"net/netip"
)

// Code is the error code of a refused destination.
const Code = "destination_not_allowed"

// Error is a refused destination. Field is the setting or manifest path
// that named it, filled in by whoever knows it (WithField); Host is the
// name as written, Address what it resolved to.
type Error struct {
	Field   string
	Host    string
	Address netip.Addr
	Reason  string
}

func (e *Error) Error() string {
	var where string
	if e.Field != "" {
		where = e.Field + ": "
	}
	host := e.Address.String()
	if e.Host != "" && e.Host != host {
		host = fmt.Sprintf("%s (%s)", e.Host, e.Address)
	}
	return fmt.Sprintf("%s%s: connecting to %s is not allowed: it is %s (the operator can allow a network with [security] allowed_outbound_networks)",
		where, Code, host, e.Reason)
}

// ErrorCode is Code, for callers that map coded errors to failures.
func (e *Error) ErrorCode() string { return Code }

// WithField returns err with field set when err is an *Error without one,
// and err unchanged otherwise.
func WithField(err error, field string) error {
	if e, ok := err.(*Error); ok && e.Field == "" {
		c := *e
		c.Field = field
		return &c
	}
	return err
}
