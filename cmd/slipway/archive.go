package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/archive"
)

// newArchiveCommand is the archiver a backup or restore runs in a
// short-lived container on the volume's node (see docs/backups.md): it
// streams a directory to the worker, or replaces it with what the worker
// sends. It is not meant to be run by hand.
func newArchiveCommand() *cobra.Command {
	var url, tokenFile, dir string
	cmd := &cobra.Command{
		Use:    "archive send|receive",
		Short:  "Stream a directory to or from a backup worker (runs inside backup containers)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := os.ReadFile(tokenFile)
			if err != nil {
				return fmt.Errorf("read token: %w", err)
			}
			token := strings.TrimSpace(string(b))
			var st archive.Stats
			switch args[0] {
			case "send":
				st, err = archive.Send(cmd.Context(), url, token, dir)
			case "receive":
				st, err = archive.Receive(cmd.Context(), url, token, dir)
			default:
				return fmt.Errorf("archive %s: use send or receive", args[0])
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d files, %d directories, %d links, %d bytes", args[0], st.Files, st.Dirs, st.Links, st.Bytes)
			if st.Skipped > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), ", %d special files skipped", st.Skipped)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "endpoint: unix:///path/to.sock or http://host:port")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "file holding the run's bearer token")
	cmd.Flags().StringVar(&dir, "dir", "", "directory archived or replaced")
	for _, f := range []string{"url", "token-file", "dir"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}
