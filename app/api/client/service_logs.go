package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/slipwayhq/slipway/app/api"
)

// ServiceLogOptions selects which lines of a service's logs to read.
type ServiceLogOptions struct {
	Tail   int       // the last lines only (the server's default when 0)
	Since  time.Time // only lines written after it (none when zero)
	Follow bool      // keep reading new lines
}

// ServiceLogs reads a running service's output, merged across its
// replicas in time order, and hands each line to emit. With Follow it
// streams until ctx ends (nil) or the server ends the stream (io.EOF:
// read again from the last line's time).
func (c *Client) ServiceLogs(ctx context.Context, app, env, service string, o ServiceLogOptions, emit func(api.ServiceLogLine) error) error {
	q := url.Values{}
	if o.Tail > 0 {
		q.Set("tail", strconv.Itoa(o.Tail))
	}
	if !o.Since.IsZero() {
		q.Set("since", o.Since.UTC().Format(time.RFC3339Nano))
	}
	path := servicePath(app, env, service) + "/logs"
	if !o.Follow {
		var list api.ServiceLogList
		if err := c.Do(ctx, http.MethodGet, path+"?"+q.Encode(), nil, &list); err != nil {
			return err
		}
		for _, l := range list.Lines {
			if err := emit(l); err != nil {
				return err
			}
		}
		return nil
	}
	q.Set("follow", "true")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base.String()+"/api/v1"+path+"?"+q.Encode(), nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/x-ndjson")
	// A followed stream stays open: no overall timeout, only ctx.
	streaming := *c.http
	streaming.Timeout = 0
	res, err := streaming.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		raw, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		return responseError(res.StatusCode, raw)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 { // the server's keepalive
			continue
		}
		var l api.ServiceLogLine
		if err := json.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("GET %s: decode line: %w", path, err)
		}
		if err := emit(l); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	return io.EOF
}
