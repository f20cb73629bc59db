package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/secrets"
)

// newRegistryCredentialCommand is `slipway registry-credential …`: the
// team's accounts on private image registries. Passwords are read from a
// file or stdin only, never from an argument, and no verb prints one.
func newRegistryCredentialCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "registry-credential",
		Aliases: []string{"registry-credentials"},
		Short:   "Set, list and delete the team's image registry accounts (passwords are write-only)",
		Long: `The team's accounts on private image registries. Slipway pulls the
team's images with the account of their registry, and hands Swarm the same
credentials with every service, so every node can pull them. Another team's
accounts are never used for your images, nor yours for theirs.`,
	}
	cmd.AddCommand(newRegistryCredentialSetCommand(), newRegistryCredentialListCommand(), newRegistryCredentialDeleteCommand())
	return cmd
}

func newRegistryCredentialSetCommand() *cobra.Command {
	var username, file string
	var fromStdin bool
	cmd := &cobra.Command{
		Use:   "set HOST --username U (--password-file F | --password-stdin)",
		Short: "Store the team's account on a registry (ghcr.io, registry.example.com:5000, docker.io)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			password, err := readRegistryPassword(cmd, file, fromStdin)
			if err != nil {
				return err
			}
			c, err := apiClient()
			if err != nil {
				return err
			}
			rc, err := c.SetRegistryCredential(cmd.Context(), args[0], username, password)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "registry %s: user %s (password stored, %d bytes)\n", rc.Host, rc.Username, len(password))
			return nil
		},
	}
	cmd.Flags().StringVar(&username, "username", "", "the registry account's user name")
	cmd.Flags().StringVar(&file, "password-file", "", "read the password or token from this file (a trailing newline is dropped)")
	cmd.Flags().BoolVar(&fromStdin, "password-stdin", false, "read the password or token from standard input")
	return cmd
}

// readRegistryPassword reads the password from --password-file or stdin,
// without its trailing newline (as docker login --password-stdin).
func readRegistryPassword(cmd *cobra.Command, file string, fromStdin bool) ([]byte, error) {
	var b []byte
	var err error
	switch {
	case file != "" && fromStdin:
		return nil, fmt.Errorf("--password-file and --password-stdin: use one (password_source_conflict)")
	case file != "":
		if b, err = os.ReadFile(file); err != nil {
			return nil, fmt.Errorf("--password-file %s: %w (password_file_unreadable)", file, err)
		}
	case fromStdin:
		if b, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), secrets.MaxRegistryPasswordSize+2)); err != nil {
			return nil, fmt.Errorf("--password-stdin: %w (password_unreadable)", err)
		}
	default:
		return nil, fmt.Errorf("--password-file or --password-stdin: give the password in a file or on stdin, never as an argument (password_required)")
	}
	return []byte(strings.TrimRight(string(b), "\r\n")), nil
}

func newRegistryCredentialListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the team's registry accounts: hosts and users (never passwords)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			list, err := c.RegistryCredentials(cmd.Context())
			if err != nil {
				return err
			}
			if len(list) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "the team has no registry credentials")
				return nil
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "HOST\tUSER\tUPDATED")
			for _, rc := range list {
				fmt.Fprintf(w, "%s\t%s\t%s\n", rc.Host, rc.Username, rc.UpdatedAt.UTC().Format(time.RFC3339))
			}
			return w.Flush()
		},
	}
}

func newRegistryCredentialDeleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "delete HOST",
		Short: "Delete the team's account on a registry (running services keep theirs until their next deployment)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClient()
			if err != nil {
				return err
			}
			if err := c.DeleteRegistryCredential(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "registry %s: credentials deleted\n", args[0])
			return nil
		},
	}
}
