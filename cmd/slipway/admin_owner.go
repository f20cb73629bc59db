package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/slipwayhq/slipway/app/auth"
	"github.com/slipwayhq/slipway/app/service"
)

// newAdminCreateOwnerCommand is `slipway admin create-owner`: the
// operator's way to create the first owner without the setup token (or
// another owner later), straight in the database.
func newAdminCreateOwnerCommand() *cobra.Command {
	var email, team, passwordFile string
	cmd := &cobra.Command{
		Use:   "create-owner --email E --team T [--password-file F]",
		Short: "Create a user who owns a new team, without the first-run form; the setup token stops working",
		Long: `Create a user who owns a new team, directly in the database (needs
DATABASE_URL). It is the alternative to the first-run form and its setup
token: once an owner exists, the setup token no longer works.

The password is read from a prompt on the terminal (asked twice), or from
--password-file (its first line; - reads standard input). It is never taken
from the command line, where other users of the machine could see it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if email == "" || team == "" {
				return errors.New("--email and --team are required (owner_fields_missing)")
			}
			password, err := readNewPassword(cmd, passwordFile)
			if err != nil {
				return err
			}
			st, done, err := adminStore(cmd)
			if err != nil {
				return err
			}
			defer done()
			u, t, err := service.CreateOwner(ctx, st, auth.DefaultArgon2, service.SignupRequest{Email: email, Password: password, TeamName: team})
			var ie *service.InputError
			if errors.As(err, &ie) {
				return fmt.Errorf("--%s: %s (%s)", flagOfField(ie.Field), ie.Message, ie.Code)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created %s (%s), owner of team %q (%s); log in at /login\n", u.Email, u.ID, t.Name, t.ID)
			return nil
		},
	}
	addConfigFlag(cmd)
	cmd.Flags().StringVar(&email, "email", "", "the owner's e-mail address (their login)")
	cmd.Flags().StringVar(&team, "team", "", "the new team's name")
	cmd.Flags().StringVar(&passwordFile, "password-file", "", "read the password from this file's first line (- for standard input) instead of a prompt")
	return cmd
}

func flagOfField(field string) string {
	if field == "" {
		return "email"
	}
	if field == "password" {
		return "password-file"
	}
	return field
}

// readNewPassword reads the password from file (first line), standard
// input ("-"), or a terminal prompt with no echo, asked twice.
func readNewPassword(cmd *cobra.Command, file string) (string, error) {
	switch {
	case file == "-":
		return firstLine(cmd.InOrStdin())
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return "", fmt.Errorf("--password-file: %w", err)
		}
		defer f.Close()
		return firstLine(f)
	}
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
		return "", errors.New("--password-file: standard input is not a terminal to prompt on; pass --password-file FILE (or - to read standard input) (password_missing)")
	}
	out := cmd.ErrOrStderr()
	fmt.Fprint(out, "Password: ")
	first, err := term.ReadPassword(fd)
	fmt.Fprintln(out)
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	fmt.Fprint(out, "Password again: ")
	second, err := term.ReadPassword(fd)
	fmt.Fprintln(out)
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	if string(first) != string(second) {
		return "", errors.New("the two passwords differ (password_mismatch)")
	}
	return string(first), nil
}

func firstLine(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("--password-file: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}
