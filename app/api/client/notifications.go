package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/notify"
)

const destinationsPath = "/notifications/destinations"

// Destinations lists the team's notification destinations.
func (c *Client) Destinations(ctx context.Context) (api.NotificationDestinationList, error) {
	var l api.NotificationDestinationList
	return l, c.Do(ctx, http.MethodGet, destinationsPath, nil, &l)
}

// CreateDestination adds a destination; a new webhook's generated signing
// secret is in the answer, once.
func (c *Client) CreateDestination(ctx context.Context, in notify.Input) (api.NotificationDestination, error) {
	var d api.NotificationDestination
	return d, c.Do(ctx, http.MethodPost, destinationsPath, in, &d)
}

// UpdateDestination changes what in sets.
func (c *Client) UpdateDestination(ctx context.Context, id string, in notify.Input) (api.NotificationDestination, error) {
	var d api.NotificationDestination
	return d, c.Do(ctx, http.MethodPatch, destinationsPath+"/"+url.PathEscape(id), in, &d)
}

// DeleteDestination removes a destination.
func (c *Client) DeleteDestination(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, destinationsPath+"/"+url.PathEscape(id), nil, nil)
}

// TestDestination queues a test message.
func (c *Client) TestDestination(ctx context.Context, id string) (api.NotificationDelivery, error) {
	var d api.NotificationDelivery
	return d, c.Do(ctx, http.MethodPost, destinationsPath+"/"+url.PathEscape(id)+"/test", nil, &d)
}

// DestinationDeliveries lists a destination's latest deliveries.
func (c *Client) DestinationDeliveries(ctx context.Context, id string) ([]api.NotificationDelivery, error) {
	var l api.NotificationDeliveryList
	return l.Deliveries, c.Do(ctx, http.MethodGet, destinationsPath+"/"+url.PathEscape(id)+"/deliveries", nil, &l)
}
