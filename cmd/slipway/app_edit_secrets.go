package main

import (
	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/manifest"
)

// newGeneratedSecretSetCommand is slipway app generated-secret set: it
// declares (or re-declares) a secret in spec.secrets. Values already
// generated are kept.
func newGeneratedSecretSetCommand() *cobra.Command {
	var f editFlags
	var g manifest.Generate
	cmd := &cobra.Command{
		Use:     "set APP NAME [--type random|rsa] [--bytes N] [--encoding hex|base64url] [--bits 2048|3072|4096]",
		Aliases: []string{"declare"},
		Short:   "Declare a secret whose value each environment generates, or change its declaration (values already generated stay)",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			d := manifest.SecretDeclaration{Name: args[1], Generate: g}
			// Only the size of the chosen type gets a default; the
			// server refuses any other combination naming the field.
			if d.Generate.Type == manifest.GenerateRandom && !cmd.Flags().Changed("bytes") {
				d.Generate.Bytes = 32
			}
			if d.Generate.Type == manifest.GenerateRSA && !cmd.Flags().Changed("bits") {
				d.Generate.Bits = 3072
			}
			return runFieldEdit(cmd, &f, args, func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
				return c.DeclareSecret(cmd.Context(), args[0], d, o)
			})
		},
	}
	cmd.Flags().StringVar(&g.Type, "type", manifest.GenerateRandom, "random or rsa")
	cmd.Flags().IntVar(&g.Bytes, "bytes", 0, "random bytes, 16-512 (default 32)")
	cmd.Flags().StringVar(&g.Encoding, "encoding", "", "hex (default) or base64url, random secrets only")
	cmd.Flags().IntVar(&g.Bits, "bits", 0, "RSA key size: 2048, 3072 or 4096 (default 3072)")
	f.add(cmd)
	return cmd
}

func newGeneratedSecretRemoveCommand() *cobra.Command {
	cmd := newEditRemoveCommand("remove APP NAME", "Remove a generated secret's declaration (refused while a service or job mounts it; generated values stay)", 2,
		func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
			return c.UndeclareSecret(cmd.Context(), args[0], args[1], o)
		})
	cmd.Aliases = []string{"undeclare"}
	return cmd
}
