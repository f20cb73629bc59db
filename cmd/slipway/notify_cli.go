package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/notify"
)

// newNotifyCommand is `slipway notify ...`: the team's notification
// destinations through the API.
func newNotifyCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "notify",
		Short: "Manage the team's notification destinations (webhook, Slack, Discord, e-mail)",
	}
	cmd.AddCommand(newNotifyListCommand(), newNotifyAddCommand(), newNotifyUpdateCommand(), newNotifyRemoveCommand(),
		newNotifyTestCommand(), newNotifyDeliveriesCommand())
	return cmd
}

func newNotifyListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List destinations: kind, where they send, events, state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			l, err := c.Destinations(cmd.Context())
			if err != nil {
				return err
			}
			tw := newTable(cmd.OutOrStdout(), "ID", "NAME", "KIND", "TARGET", "STATE", "EVENTS")
			for _, d := range l.Destinations {
				tw.row(d.ID, d.Name, d.Kind, destinationCell(d), stateCell(d), strings.Join(d.Events, ","))
			}
			return tw.flush()
		},
	}
}

func destinationCell(d api.NotificationDestination) string {
	if d.Kind == notify.KindEmail {
		return strings.Join(d.To, ",") + " via " + d.SMTPHost
	}
	return d.Host
}

func stateCell(d api.NotificationDestination) string {
	switch {
	case !d.Enabled:
		return "disabled"
	case d.Failing:
		return fmt.Sprintf("failing (%d in a row): %s", d.ConsecutiveFailures, d.LastError)
	}
	return "ok"
}

// destinationFlags are the flags add and update share. Credentials come
// from stdin ("-") or a file, never from an argument a process list shows.
type destinationFlags struct {
	kind, urlSource, secretSource, passwordSource string
	events                                        []string
	minutes                                       int
	smtpHost, smtpUser, from                      string
	smtpPort                                      int
	to                                            []string
	disable, enable                               bool
}

func (f *destinationFlags) bind(cmd *cobra.Command, add bool) {
	fl := cmd.Flags()
	if add {
		fl.StringVar(&f.kind, "kind", "", "webhook, slack, discord or email")
	}
	fl.StringVar(&f.urlSource, "url-file", "", "file holding the webhook, Slack or Discord URL (- reads stdin)")
	fl.StringVar(&f.secretSource, "secret-file", "", "file holding the webhook's signing secret (- reads stdin); without it a new webhook gets a generated one")
	fl.StringVar(&f.passwordSource, "smtp-password-file", "", "file holding the SMTP password (- reads stdin)")
	fl.StringSliceVar(&f.events, "events", nil, "events to receive, comma-separated: "+strings.Join(kindNames(), ", "))
	fl.IntVar(&f.minutes, "unhealthy-minutes", 0, "minutes a service must be unhealthy before it is told (1-1440)")
	fl.StringVar(&f.smtpHost, "smtp-host", "", "SMTP server (STARTTLS required)")
	fl.IntVar(&f.smtpPort, "smtp-port", 0, "SMTP port (587 by default)")
	fl.StringVar(&f.smtpUser, "smtp-username", "", "SMTP username")
	fl.StringVar(&f.from, "from", "", "sender address")
	fl.StringSliceVar(&f.to, "to", nil, "recipients, comma-separated")
	if !add {
		fl.BoolVar(&f.disable, "disable", false, "stop sending to it")
		fl.BoolVar(&f.enable, "enable", false, "send to it again")
	}
}

func kindNames() []string {
	out := make([]string, len(notify.Kinds))
	for i, k := range notify.Kinds {
		out[i] = string(k)
	}
	return out
}

// input turns the flags that were set into a notify.Input.
func (f *destinationFlags) input(cmd *cobra.Command, stdin io.Reader) (notify.Input, error) {
	var in notify.Input
	set := cmd.Flags().Changed
	str := func(v string) *string { return &v }
	if f.kind != "" {
		in.Kind = str(f.kind)
	}
	for _, s := range []struct {
		flag, source string
		into         **string
	}{{"url-file", f.urlSource, &in.URL}, {"secret-file", f.secretSource, &in.Secret}, {"smtp-password-file", f.passwordSource, &in.SMTPPassword}} {
		if s.source == "" {
			continue
		}
		v, err := readSource(s.source, stdin)
		if err != nil {
			return in, fmt.Errorf("--%s: %w", s.flag, err)
		}
		*s.into = &v
	}
	if set("events") {
		in.Events = &f.events
	}
	if set("unhealthy-minutes") {
		in.UnhealthyMinutes = &f.minutes
	}
	if set("smtp-host") {
		in.SMTPHost = str(f.smtpHost)
	}
	if set("smtp-port") {
		in.SMTPPort = &f.smtpPort
	}
	if set("smtp-username") {
		in.SMTPUsername = str(f.smtpUser)
	}
	if set("from") {
		in.From = str(f.from)
	}
	if set("to") {
		in.To = &f.to
	}
	if f.disable || f.enable {
		on := f.enable
		in.Enabled = &on
	}
	return in, nil
}

func readSource(source string, stdin io.Reader) (string, error) {
	var b []byte
	var err error
	if source == "-" {
		b, err = io.ReadAll(io.LimitReader(stdin, 64<<10))
	} else {
		b, err = os.ReadFile(source)
	}
	return strings.TrimSpace(string(b)), err
}

func newNotifyAddCommand() *cobra.Command {
	var f destinationFlags
	cmd := &cobra.Command{
		Use:   "add NAME --kind KIND",
		Short: "Add a destination",
		Example: `  printf '%s' "$SLACK_URL" | slipway notify add ops --kind slack --url-file - --events deployment.failed,service.unhealthy
  slipway notify add oncall --kind email --smtp-host smtp.example.com --smtp-username bot --smtp-password-file pw.txt \
    --from slipway@example.com --to oncall@example.com`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			in, err := f.input(cmd, cmd.InOrStdin())
			if err != nil {
				return err
			}
			in.Name = &args[0]
			d, err := c.CreateDestination(cmd.Context(), in)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Added %s (%s).\n", d.Name, d.ID)
			if d.Secret != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "Signing secret (shown once; receivers check X-Slipway-Signature-256 with it):\n%s\n", d.Secret)
			}
			return nil
		},
	}
	f.bind(cmd, true)
	return cmd
}

func newNotifyUpdateCommand() *cobra.Command {
	var f destinationFlags
	cmd := &cobra.Command{
		Use:   "update DESTINATION",
		Short: "Change a destination (by id or name); flags left out keep their value",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := destinationClient(cmd, args[0])
			if err != nil {
				return err
			}
			in, err := f.input(cmd, cmd.InOrStdin())
			if err != nil {
				return err
			}
			d, err := c.UpdateDestination(cmd.Context(), id, in)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Saved %s: %s.\n", d.Name, stateCell(d))
			return nil
		},
	}
	f.bind(cmd, false)
	return cmd
}

// destinationClient resolves a destination named by id or name.
func destinationClient(cmd *cobra.Command, ref string) (*client.Client, string, error) {
	c, err := apiClient()
	if err != nil {
		return nil, "", err
	}
	if strings.HasPrefix(ref, "ntf_") {
		return c, ref, nil
	}
	l, err := c.Destinations(cmd.Context())
	if err != nil {
		return nil, "", err
	}
	for _, d := range l.Destinations {
		if d.Name == ref {
			return c, d.ID, nil
		}
	}
	return nil, "", fmt.Errorf("no destination named %q (destination_not_found); see slipway notify list", ref)
}

func newNotifyRemoveCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "remove DESTINATION",
		Short: "Remove a destination and its deliveries",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := destinationClient(cmd, args[0])
			if err != nil {
				return err
			}
			if err := c.DeleteDestination(cmd.Context(), id); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Removed %s.\n", args[0])
			return nil
		},
	}
}

func newNotifyTestCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "test DESTINATION",
		Short: "Queue a test message to a destination; see it arrive with notify deliveries",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := destinationClient(cmd, args[0])
			if err != nil {
				return err
			}
			d, err := c.TestDestination(cmd.Context(), id)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Test queued (delivery %s).\n", d.ID)
			return nil
		},
	}
}

func newNotifyDeliveriesCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "deliveries DESTINATION",
		Short: "List a destination's latest deliveries and their status",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, id, err := destinationClient(cmd, args[0])
			if err != nil {
				return err
			}
			list, err := c.DestinationDeliveries(cmd.Context(), id)
			if err != nil {
				return err
			}
			tw := newTable(cmd.OutOrStdout(), "ID", "EVENT", "STATUS", "ATTEMPTS", "CREATED", "ERROR")
			for _, d := range list {
				tw.row(d.ID, d.Event, d.Status, fmt.Sprint(d.Attempts), d.CreatedAt.UTC().Format("2006-01-02 15:04:05"), d.LastError)
			}
			return tw.flush()
		},
	}
}
