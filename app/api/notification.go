package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/store"
)

// NotificationDestination is a destination as the API returns it. Its
// credentials (URL, signing secret, SMTP password) are write-only: only
// the URL's host is shown.
type NotificationDestination struct {
	ID               string   `json:"id"`
	Name             string   `json:"name"`
	Kind             string   `json:"kind"`
	Events           []string `json:"events"`
	UnhealthyMinutes int      `json:"unhealthy_minutes"`
	Enabled          bool     `json:"enabled"`
	Host             string   `json:"host,omitempty"`
	SMTPHost         string   `json:"smtp_host,omitempty"`
	SMTPPort         int      `json:"smtp_port,omitempty"`
	SMTPUsername     string   `json:"smtp_username,omitempty"`
	From             string   `json:"from,omitempty"`
	To               []string `json:"to,omitempty"`
	// Failing is true after notify.FailingAfter failed attempts in a row.
	Failing             bool       `json:"failing"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	LastError           string     `json:"last_error,omitempty"`
	LastAttemptAt       *time.Time `json:"last_attempt_at,omitempty"`
	LastSuccessAt       *time.Time `json:"last_success_at,omitempty"`
	CreatedAt           time.Time  `json:"created_at"`
	UpdatedAt           time.Time  `json:"updated_at"`
	// Secret is the generated signing secret of a new generic webhook,
	// in the creation's answer only.
	Secret string `json:"secret,omitempty"`
}

// NotificationDestinationList is GET /notifications/destinations.
type NotificationDestinationList struct {
	Destinations []NotificationDestination `json:"destinations"`
	// Events are the event kinds a destination can choose.
	Events []string `json:"events"`
}

// NotificationDelivery is one delivery to a destination.
type NotificationDelivery struct {
	ID          string     `json:"id"`
	Event       string     `json:"event"`
	Status      string     `json:"status"`
	Attempts    int        `json:"attempts"`
	LastError   string     `json:"last_error,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
}

// NotificationDeliveryList is GET /notifications/destinations/{id}/deliveries.
type NotificationDeliveryList struct {
	Deliveries []NotificationDelivery `json:"deliveries"`
}

func (h *handler) registerNotifications(r fiber.Router) {
	r.Get("/notifications/destinations", h.requireScope(auth.AppsRead), h.destinationList)
	r.Post("/notifications/destinations", h.requireScope(auth.NotificationsManage), h.destinationCreate)
	r.Get("/notifications/destinations/:destination", h.requireScope(auth.AppsRead), h.destinationShow)
	r.Patch("/notifications/destinations/:destination", h.requireScope(auth.NotificationsManage), h.destinationUpdate)
	r.Delete("/notifications/destinations/:destination", h.requireScope(auth.NotificationsManage), h.destinationDelete)
	r.Post("/notifications/destinations/:destination/test", h.requireScope(auth.NotificationsManage), h.destinationTest)
	r.Get("/notifications/destinations/:destination/deliveries", h.requireScope(auth.AppsRead), h.destinationDeliveries)
}

// NotificationDestinationOf renders a destination for the API.
func NotificationDestinationOf(d notify.Destination) NotificationDestination {
	return NotificationDestination{
		ID: d.ID, Name: d.Name, Kind: d.Kind, Events: d.Events, UnhealthyMinutes: d.UnhealthyMinutes, Enabled: d.Enabled,
		Host: d.Settings.Host, SMTPHost: d.Settings.SMTPHost, SMTPPort: d.Settings.SMTPPort, SMTPUsername: d.Settings.SMTPUsername,
		From: d.Settings.From, To: d.Settings.To,
		Failing: d.Failing(), ConsecutiveFailures: d.ConsecutiveFailures, LastError: d.LastError,
		LastAttemptAt: d.LastAttemptAt, LastSuccessAt: d.LastSuccessAt, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
	}
}

func (h *handler) notifications(c *fiber.Ctx) (*notify.Service, error) {
	if h.notify == nil {
		return nil, WriteError(c, http.StatusServiceUnavailable, "notifications_unavailable",
			"this server has no secret key, so it cannot keep destination credentials", nil)
	}
	return h.notify, nil
}

// notifyFail answers a notification operation's error: refused fields
// with every field named.
func (h *handler) notifyFail(c *fiber.Ctx, err error) error {
	var ie *notify.InputError
	if errors.As(err, &ie) {
		first := ie.First()
		status := http.StatusUnprocessableEntity
		if first.Code == "destination_name_taken" {
			status = http.StatusConflict
		}
		return WriteError(c, status, first.Code, first.Message, map[string]any{"field": first.Field, "errors": ie.Errors})
	}
	if errors.Is(err, notify.ErrUnavailable) {
		return WriteError(c, http.StatusServiceUnavailable, "notifications_unavailable", err.Error(), nil)
	}
	return h.fail(c, err)
}

func (h *handler) destinationList(c *fiber.Ctx) error {
	svc, err := h.notifications(c)
	if svc == nil {
		return err
	}
	list, err := svc.List(c.UserContext(), callerOf(c).token.TeamID)
	if err != nil {
		return h.fail(c, err)
	}
	out := NotificationDestinationList{Destinations: []NotificationDestination{}}
	for _, d := range list {
		out.Destinations = append(out.Destinations, NotificationDestinationOf(d))
	}
	for _, k := range notify.Kinds {
		out.Events = append(out.Events, string(k))
	}
	return c.JSON(out)
}

func (h *handler) destinationShow(c *fiber.Ctx) error {
	svc, err := h.notifications(c)
	if svc == nil {
		return err
	}
	d, err := svc.Get(c.UserContext(), callerOf(c).token.TeamID, c.Params("destination"))
	if err != nil {
		return h.fail(c, err)
	}
	return c.JSON(NotificationDestinationOf(d))
}

func (h *handler) destinationCreate(c *fiber.Ctx) error {
	svc, err := h.notifications(c)
	if svc == nil {
		return err
	}
	var in notify.Input
	if bad := decode(c.Body(), &in); bad != nil {
		return bad.write(c)
	}
	d, secret, err := svc.Create(c.UserContext(), callerOf(c).token.TeamID, in)
	if err != nil {
		return h.notifyFail(c, err)
	}
	out := NotificationDestinationOf(d)
	out.Secret = secret
	return c.Status(http.StatusCreated).JSON(out)
}

func (h *handler) destinationUpdate(c *fiber.Ctx) error {
	svc, err := h.notifications(c)
	if svc == nil {
		return err
	}
	// The destination first: another team's is not_found, whatever the body.
	teamID, id := callerOf(c).token.TeamID, c.Params("destination")
	if _, err := svc.Get(c.UserContext(), teamID, id); err != nil {
		return h.fail(c, err)
	}
	var in notify.Input
	if bad := decode(c.Body(), &in); bad != nil {
		return bad.write(c)
	}
	d, err := svc.Update(c.UserContext(), teamID, id, in)
	if err != nil {
		return h.notifyFail(c, err)
	}
	return c.JSON(NotificationDestinationOf(d))
}

func (h *handler) destinationDelete(c *fiber.Ctx) error {
	svc, err := h.notifications(c)
	if svc == nil {
		return err
	}
	if err := svc.Delete(c.UserContext(), callerOf(c).token.TeamID, c.Params("destination")); err != nil {
		return h.fail(c, err)
	}
	return c.SendStatus(http.StatusNoContent)
}

// destinationTest queues a test message; its delivery shows in the
// destination's deliveries.
func (h *handler) destinationTest(c *fiber.Ctx) error {
	svc, err := h.notifications(c)
	if svc == nil {
		return err
	}
	ctx, k := c.UserContext(), callerOf(c)
	var dl store.NotificationDelivery
	err = h.store.WithTx(ctx, func(tx *store.Store) error {
		var err error
		dl, err = svc.WithStore(tx).SendTest(ctx, k.token.TeamID, c.Params("destination"), "token "+k.token.Name)
		return err
	})
	if err != nil {
		return h.fail(c, err)
	}
	return c.Status(http.StatusAccepted).JSON(NotificationDeliveryOf(dl))
}

func (h *handler) destinationDeliveries(c *fiber.Ctx) error {
	svc, err := h.notifications(c)
	if svc == nil {
		return err
	}
	list, err := svc.Deliveries(c.UserContext(), callerOf(c).token.TeamID, c.Params("destination"), 50)
	if err != nil {
		return h.fail(c, err)
	}
	out := NotificationDeliveryList{Deliveries: []NotificationDelivery{}}
	for _, d := range list {
		out.Deliveries = append(out.Deliveries, NotificationDeliveryOf(d))
	}
	return c.JSON(out)
}

// NotificationDeliveryOf renders a delivery for the API.
func NotificationDeliveryOf(d store.NotificationDelivery) NotificationDelivery {
	return NotificationDelivery{ID: d.ID, Event: d.Event, Status: d.Status, Attempts: d.Attempts, LastError: d.LastError,
		CreatedAt: d.CreatedAt, DeliveredAt: d.DeliveredAt}
}
