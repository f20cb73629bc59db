package app

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/views/page"
)

// destinationCreate adds a destination from the form; a new webhook's
// generated signing secret is shown once, on the page this answers.
func (h *handler) destinationCreate(c *fiber.Ctx) error {
	if h.notify == nil {
		return fiber.ErrServiceUnavailable
	}
	in := destinationForm(c, true)
	d, secret, err := h.notify.Create(c.UserContext(), visitorOf(c).current.Team.ID, in)
	if err != nil {
		return h.destinationRefused(c, err)
	}
	if secret != "" {
		return h.renderDestinations(c, http.StatusOK, page.NotificationsView{Notice: "Destination " + d.Name + " added.", Secret: secret})
	}
	return c.Redirect("/notifications?notice=created", http.StatusSeeOther)
}

// destinationRefused shows the form again with each refused field.
func (h *handler) destinationRefused(c *fiber.Ctx, err error) error {
	var ie *notify.InputError
	if !errors.As(err, &ie) {
		return err
	}
	v := page.NotificationsView{Errors: map[string]string{}, Form: map[string]string{}, Chosen: map[string]bool{}}
	for _, f := range ie.Errors {
		field := f.Field
		if i := strings.IndexByte(field, '['); i > 0 {
			field = field[:i]
		}
		if v.Errors[field] == "" {
			v.Errors[field] = f.Message
		}
	}
	for _, k := range []string{"name", "kind", "url", "smtp_host", "smtp_port", "smtp_username", "from", "to", "unhealthy_minutes"} {
		v.Form[k] = c.FormValue(k)
	}
	for _, e := range formValues(c, "events") {
		v.Chosen[e] = true
	}
	return h.renderDestinations(c, http.StatusUnprocessableEntity, v)
}

// destinationForm reads a destination form. Blank credentials are left
// out, so an edit keeps the stored ones.
func destinationForm(c *fiber.Ctx, create bool) notify.Input {
	var in notify.Input
	str := func(name string) *string {
		v := strings.TrimSpace(c.FormValue(name))
		if v == "" {
			return nil
		}
		return &v
	}
	num := func(name string) *int {
		v := strings.TrimSpace(c.FormValue(name))
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			n = -1 // refused by validation, naming the field
		}
		return &n
	}
	events := formValues(c, "events")
	in.Events = &events
	in.UnhealthyMinutes = num("unhealthy_minutes")
	in.URL = str("url")
	if create {
		in.Name, in.Kind = str("name"), str("kind")
		if in.Name == nil {
			empty := ""
			in.Name = &empty
		}
		in.Secret = str("secret")
		if in.Kind != nil && *in.Kind == notify.KindEmail {
			in.SMTPHost, in.SMTPPort, in.SMTPUsername, in.From = str("smtp_host"), num("smtp_port"), str("smtp_username"), str("from")
			if to := str("to"); to != nil {
				list := strings.Split(*to, ",")
				in.To = &list
			}
		}
	} else {
		enabled := c.FormValue("enabled") == "1"
		in.Enabled = &enabled
	}
	if in.Kind == nil || *in.Kind == notify.KindEmail {
		in.SMTPPassword = str("smtp_password")
	}
	if in.Kind != nil && *in.Kind == notify.KindEmail {
		in.URL = nil
	}
	return in
}

// formValues returns every value of a repeated form field.
func formValues(c *fiber.Ctx, name string) []string {
	var out []string
	for _, v := range c.Request().PostArgs().PeekMulti(name) {
		out = append(out, string(v))
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
