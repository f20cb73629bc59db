package app

import (
	"errors"

	"github.com/slipwayhq/slipway/app/service"
)

// fieldErrors turns an operation's error into per-field form messages; ok
// is false for errors that are not the user's input (those go to
// handleError).
func fieldErrors(err error) (map[string]string, bool) {
	var ie *service.InputError
	if errors.As(err, &ie) {
		return map[string]string{ie.Field: ie.Message}, true
	}
	return nil, false
}
