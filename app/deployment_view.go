package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views"
	"github.com/slipwayhq/slipway/views/partial"
)

// This file completes deploymentView (application_view.go) for the
// Deployments tab and a deployment's own page.

// liveReadTimeout bounds what a deployment page reads from Docker while
// a rollout runs; the page polls again in two seconds.
const liveReadTimeout = 2 * time.Second

// deploymentDetail is a deployment as its page shows it: steps a finished
// deployment left "running" marked with its outcome, the live rollout's
// replica counts and output, the addresses to visit after success, and
// the actions that make sense for its state.
func (h *handler) deploymentDetail(ctx context.Context, d store.Deployment, env store.Environment, who people) (partial.DeploymentView, error) {
	v := h.deploymentView(d, env, who)
	live, err := h.liveDeployment(ctx, env)
	if err != nil {
		return v, err
	}
	describeDeployment(&v, d, env, live)
	settleSteps(&v)
	if d.State == store.StateSucceeded && d.RenderedManifest != nil {
		var m manifest.Manifest
		if json.Unmarshal(d.RenderedManifest, &m) == nil {
			_, routes := servicesAndRoutes(&m)
			for _, r := range routes {
				if r.URL != "" {
					v.Visit = append(v.Visit, r.URL)
				}
			}
		}
	}
	if !v.Terminal {
		h.addRolloutProgress(ctx, &v, env)
	}
	return v, nil
}

// liveDeployment is the id of what runs in env: its latest successful
// deployment, "" when none succeeded.
func (h *handler) liveDeployment(ctx context.Context, env store.Environment) (string, error) {
	d, err := h.store.LatestSucceededDeployment(ctx, env.TeamID, env.ID)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return d.ID, err
}

// describeDeployment sets what the list and the page say about d: whether
// it is live, where it came from, and which actions it offers. A
// succeeded deployment is not retried; a failed, cancelled or superseded
// one never ran as a whole, so it cannot be restored: it is deployed again.
// Restoring makes sense for a succeeded deployment that no longer runs.
func describeDeployment(v *partial.DeploymentView, d store.Deployment, env store.Environment, live string) {
	v.Live = live != "" && live == d.ID
	v.LiveID = live
	v.OriginText = originText(d)
	ended := d.State == store.StateFailed || d.State == store.StateCancelled || d.State == store.StateSuperseded
	v.Retryable = ended && env.PromoteFrom == ""
	v.RetryLabel = "Deploy again"
	if d.State == store.StateFailed {
		v.RetryLabel = "Retry"
	}
	v.Restorable = d.State == store.StateSucceeded && !v.Live && d.RenderedManifest != nil
}

// originText says in words where a deployment's revision came from, next
// to it ("build" alone means nothing to a reader).
func originText(d store.Deployment) string {
	switch d.Origin {
	case store.OriginBuild:
		return "built from the saved manifest"
	case store.OriginRestore:
		return "restored: runs an earlier deployment again, as it ran"
	case store.OriginRollback:
		return "automatic rollback to the last deployment that succeeded"
	case store.OriginPromotion:
		return "promoted: runs another environment's release"
	case store.OriginRelease:
		return "runs a recorded release"
	}
	return string(d.Origin)
}

// settleSteps marks the steps a finished deployment left running with how
// it ended (a failure that stopped a step before the pipeline recorded it
// must not read "running"), and writes counts in words.
func settleSteps(v *partial.DeploymentView) {
	for i := range v.Steps {
		s := &v.Steps[i]
		if v.Terminal && s.State == "running" {
			switch v.State {
			case string(store.StateFailed):
				s.State = "failed"
				if s.Message == "" && v.ErrorMessage != "" {
					s.Message = v.ErrorMessage
				}
			default:
				s.State = v.State // cancelled, superseded
			}
		}
		s.Message = countsInWords(s.Message)
	}
}

var countRE = regexp.MustCompile(`^(\d+) (changes|removed)$`)

// countsInWords rewrites the pipeline's "N changes" messages with the
// right plural ("1 change").
func countsInWords(msg string) string {
	m := countRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	n, _ := strconv.Atoi(m[1])
	switch m[2] {
	case "changes":
		return views.Plural(n, "change", "changes")
	default:
		return views.Plural(n, "object", "objects") + " removed"
	}
}

// addRolloutProgress shows, on each running rollout step, how many
// replicas of the service run healthy and what its tasks last wrote or
// failed with, read from Docker. Docker being slow or away only leaves
// them out.
func (h *handler) addRolloutProgress(ctx context.Context, v *partial.DeploymentView, env store.Environment) {
	var rolling []int
	for i, s := range v.Steps {
		if s.State == "running" && strings.HasPrefix(s.Name, "rollout:") {
			rolling = append(rolling, i)
		}
	}
	if len(rolling) == 0 || h.runtime == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, liveReadTimeout)
	defer cancel()
	statuses, err := h.runtime.ServiceStatus(ctx, env.ID)
	if err != nil {
		return
	}
	for _, i := range rolling {
		s := &v.Steps[i]
		service := strings.TrimPrefix(s.Name, "rollout:")
		for _, st := range statuses {
			if st.Service != service {
				continue
			}
			s.Replicas = fmt.Sprintf("%d/%d healthy", st.Running, st.Desired)
			s.TaskError = st.LastError
		}
		if h.logs == nil {
			continue
		}
		var out []string
		_ = h.logs.ServiceLogs(ctx, env.ID, service, LogOptions{Tail: 10}, func(lines []LogLine) error {
			for _, l := range lines {
				out = append(out, l.Task+"  "+l.Text)
			}
			return nil
		})
		s.TaskOutput = strings.Join(out, "\n")
	}
}
