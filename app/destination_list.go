package app

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/views/page"
	"github.com/slipwayhq/slipway/views/partial"
)

// registerNotifications mounts the Notifications page: the team's
// destinations, added, changed, tested and removed by those who may
// manage notifications.
func registerNotifications(f *fiber.App, h *handler) {
	f.Get("/notifications", h.requireScope(auth.AppsRead), h.destinationList)
	f.Post("/notifications", h.requireScope(auth.NotificationsManage), h.destinationCreate)
	f.Get("/notifications/:destination/deliveries", h.requireScope(auth.AppsRead), h.destinationDeliveries)
	f.Post("/notifications/:destination", h.requireScope(auth.NotificationsManage), h.destinationUpdate)
	f.Post("/notifications/:destination/delete", h.requireScope(auth.NotificationsManage), h.destinationDelete)
	f.Post("/notifications/:destination/test", h.requireScope(auth.NotificationsManage), h.destinationCheck)
}

// destinationList shows the team's destinations.
func (h *handler) destinationList(c *fiber.Ctx) error {
	return h.renderDestinations(c, http.StatusOK, page.NotificationsView{Notice: noticeOf(c.Query("notice"))})
}

// renderDestinations fills v with the destinations and renders the page.
func (h *handler) renderDestinations(c *fiber.Ctx, status int, v page.NotificationsView) error {
	if h.notify == nil {
		return &codedError{status: http.StatusServiceUnavailable, code: "notifications_unavailable", msg: "Notifications need the server's secret key, which this server does not have."}
	}
	ctx, teamID := c.UserContext(), visitorOf(c).current.Team.ID
	list, err := h.notify.List(ctx, teamID)
	if err != nil {
		return err
	}
	for _, k := range notify.Kinds {
		v.Events = append(v.Events, page.EventChoice{Value: string(k), Label: k.Label()})
	}
	v.Kinds = notify.DestinationKinds
	if v.Chosen == nil {
		v.Chosen = map[string]bool{}
		for _, k := range notify.DefaultKinds {
			v.Chosen[string(k)] = true
		}
	}
	for _, d := range list {
		deliveries, err := h.deliveriesView(c, teamID, d.ID)
		if err != nil {
			return err
		}
		row := page.DestinationRow{
			ID: d.ID, Name: d.Name, Kind: d.Kind, Target: destinationTarget(d), Events: map[string]bool{},
			UnhealthyMinutes: itoa(d.UnhealthyMinutes), Enabled: d.Enabled, Failing: d.Failing(), LastError: d.LastError,
			Deliveries: deliveries,
		}
		if d.LastSuccessAt != nil {
			row.LastSuccess = when(d.LastSuccessAt)
		}
		for _, e := range d.Events {
			row.Events[e] = true
		}
		v.Destinations = append(v.Destinations, row)
	}
	return h.render(c, status, "Notifications", page.Notifications(v))
}

// destinationTarget says where a destination sends, without credentials.
func destinationTarget(d notify.Destination) string {
	if d.Kind == notify.KindEmail {
		return "to " + strings.Join(d.Settings.To, ", ") + " via " + d.Settings.SMTPHost + ":" + itoa(d.Settings.SMTPPort)
	}
	return d.Settings.Host
}

// deliveriesView is a destination's latest deliveries.
func (h *handler) deliveriesView(c *fiber.Ctx, teamID, id string) (partial.DeliveriesView, error) {
	list, err := h.notify.Deliveries(c.UserContext(), teamID, id, 5)
	if err != nil {
		return partial.DeliveriesView{}, err
	}
	v := partial.DeliveriesView{URL: "/notifications/" + id + "/deliveries"}
	for _, d := range list {
		v.Rows = append(v.Rows, deliveryRow(d))
		v.Pending = v.Pending || d.Status == store.DeliveryPending
	}
	return v, nil
}

func deliveryRow(d store.NotificationDelivery) partial.DeliveryRow {
	return partial.DeliveryRow{Event: d.Event, Status: d.Status, Attempts: d.Attempts, When: when(&d.CreatedAt), Error: d.LastError}
}

// destinationDeliveries is the deliveries partial, reloaded while one is
// pending.
func (h *handler) destinationDeliveries(c *fiber.Ctx) error {
	if h.notify == nil {
		return fiber.ErrServiceUnavailable
	}
	v, err := h.deliveriesView(c, visitorOf(c).current.Team.ID, c.Params("destination"))
	if err != nil {
		return err
	}
	return h.render(c, http.StatusOK, "Deliveries", partial.Deliveries(v))
}

// noticeOf maps the notice a redirect names to its sentence.
func noticeOf(code string) string {
	switch code {
	case "created":
		return "Destination added."
	case "saved":
		return "Destination saved."
	case "deleted":
		return "Destination deleted."
	case "test":
		return "Test message queued: its delivery shows below."
	}
	return ""
}
