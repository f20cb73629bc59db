package ingress

import (
	"context"
	"encoding/json"
	"net/http"
)

// LeavePath is where a stopping gateway agent asks serve whether its node
// is still an ingress node (POST a LeaveRequest, answered by a
// LeaveAnswer): Swarm stops the agent both when the node loses its label,
// and then the gateway must go, and when the agent is restarted or
// upgraded, and then the gateway must keep serving.
const LeavePath = "/internal/gateway/leave"

// LeaveRequest names the stopping agent's gateway and its Swarm node.
type LeaveRequest struct {
	Gateway string `json:"gateway"`
	Node    string `json:"node"`
}

// LeaveAnswer says whether the agent removes its gateway: the node is no
// longer an ingress node (serve then forgot the gateway's reports).
type LeaveAnswer struct {
	Remove bool `json:"remove"`
}

// Validate checks the names' lengths (a Swarm node ID is 25 characters).
func (r LeaveRequest) Validate() error {
	if r.Gateway == "" || len(r.Gateway) > 253 {
		return TableError{Path: "gateway", Code: "gateway_name_invalid", Message: "gateway name must be 1 to 253 characters"}
	}
	if r.Node == "" || len(r.Node) > 64 {
		return TableError{Path: "node", Code: "node_id_invalid", Message: "node ID must be 1 to 64 characters"}
	}
	return nil
}

// maxLeaveRequestBytes bounds a request: two names.
const maxLeaveRequestBytes = 4 << 10

// LeaveHandler is serve's handler for POST LeavePath: it decodes and
// validates a request and answers what the function decides.
type LeaveHandler func(ctx context.Context, r LeaveRequest) (LeaveAnswer, error)

func (f LeaveHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, ok := decodeRequest[LeaveRequest](w, r, http.MethodPost, "leave_request", maxLeaveRequestBytes)
	if !ok {
		return
	}
	ans, err := f(r.Context(), req)
	if err != nil {
		http.Error(w, "leave_request_failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(ans)
}
