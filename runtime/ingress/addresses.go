package ingress

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
)

// AddressesPath is where serve receives AddressReports.
const AddressesPath = "/internal/gateway/addresses"

// AddressReport is a gateway's address on each ingress overlay it is on,
// sent by the agent that joins it to them (gatewayagent): the services
// routed on a network trust these addresses (SLIPWAY_INGRESS_PROXIES).
// Each report replaces the gateway's last one.
type AddressReport struct {
	Gateway string `json:"gateway"`
	// Addresses maps a network's name to the gateway's IPv4 address on it.
	Addresses map[string]string `json:"addresses"`
}

// maxAddressReportBytes bounds a report: one short line per network.
const maxAddressReportBytes = 4 << 20

// Validate checks the gateway name and every network and address.
func (r AddressReport) Validate() error {
	if r.Gateway == "" || len(r.Gateway) > 253 {
		return TableError{Path: "gateway", Code: "gateway_name_invalid", Message: "gateway name must be 1 to 253 characters"}
	}
	for n, a := range r.Addresses {
		if n == "" || len(n) > 255 {
			return TableError{Path: "addresses", Code: "network_name_invalid", Message: fmt.Sprintf("network name %q must be 1 to 255 characters", n)}
		}
		if ip, err := netip.ParseAddr(a); err != nil || !ip.Is4() {
			return TableError{Path: "addresses." + n, Code: "address_invalid", Message: fmt.Sprintf("address %q is not an IPv4 address", a)}
		}
	}
	return nil
}

// AddressReceiver is serve's handler for PUT AddressesPath: it decodes and
// validates a report and hands it to the function (which stores it).
type AddressReceiver func(ctx context.Context, r AddressReport) error

func (f AddressReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	receive(w, r, "address_report", maxAddressReportBytes, f)
}

// receive is a PUT of a JSON report: decoded (at most limit bytes),
// validated and handed to store; code prefixes the errors.
func receive[T interface{ Validate() error }](w http.ResponseWriter, r *http.Request, code string, limit int64, store func(context.Context, T) error) {
	rep, ok := decodeRequest[T](w, r, http.MethodPut, code, limit)
	if !ok {
		return
	}
	if err := store(r.Context(), rep); err != nil {
		http.Error(w, code+"_failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// decodeRequest reads a request of method whose body is JSON (at most
// limit bytes) and validates it. When it cannot, it has answered (code
// prefixes the error) and ok is false.
func decodeRequest[T interface{ Validate() error }](w http.ResponseWriter, r *http.Request, method, code string, limit int64) (req T, ok bool) {
	if r.Method != method {
		w.Header().Set("Allow", method)
		http.Error(w, "method_not_allowed: use "+method, http.StatusMethodNotAllowed)
		return req, false
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit)).Decode(&req); err != nil {
		http.Error(w, code+"_invalid: "+err.Error(), http.StatusBadRequest)
		return req, false
	}
	if err := req.Validate(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return req, false
	}
	return req, true
}
