package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/app/api"
	"github.com/slipwayhq/slipway/app/api/client"
	"github.com/slipwayhq/slipway/manifest"
)

// envPairs parses repeated --env KEY=VALUE flags; nil when there are none.
func envPairs(pairs []string) (map[string]string, error) {
	var env map[string]string
	for _, kv := range pairs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--env %q: write KEY=VALUE (env_invalid)", kv)
		}
		if env == nil {
			env = map[string]string{}
		}
		env[k] = v
	}
	return env, nil
}

// fragmentHeader turns a service fragment into a manifest document the
// strict decoder reads; its lines are subtracted from error positions.
const fragmentHeader = "api_version = \"" + manifest.APIVersion + "\"\nkind = \"" + manifest.Kind + "\"\n[metadata]\nname = \"fragment\"\n"

// serviceFragment reads one service from a TOML file: a [[spec.services]]
// table as written in a manifest, or its keys alone (tables inline). Every
// decoding problem is printed with its path and line in the file.
func serviceFragment(cmd *cobra.Command, path string) (manifest.Service, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return manifest.Service{}, fmt.Errorf("--from-file: %w", err)
	}
	prefix := fragmentHeader
	if !bytes.Contains(data, []byte("[[spec.services]]")) {
		prefix += "[[spec.services]]\n"
	}
	m, err := manifest.Decode(append([]byte(prefix), data...), "toml")
	var errs manifest.Errors
	if errors.As(err, &errs) {
		shift := strings.Count(prefix, "\n")
		for _, e := range errs {
			if e.Line > shift {
				e.Line -= shift
			}
			fmt.Fprintln(cmd.ErrOrStderr(), e.Error())
		}
		return manifest.Service{}, &exitError{code: 1, err: fmt.Errorf("--from-file %s: %d error(s) (fragment_invalid)", path, len(errs))}
	}
	if err != nil {
		return manifest.Service{}, fmt.Errorf("--from-file %s: %w (fragment_invalid)", path, err)
	}
	services := m.Spec.Services
	m.Spec.Services = nil
	if len(services) != 1 || !reflect.DeepEqual(m.Spec, manifest.Spec{}) {
		return manifest.Service{}, fmt.Errorf("--from-file %s: write exactly one service and nothing else (fragment_invalid)", path)
	}
	return services[0], nil
}

func newServiceAddCommand() *cobra.Command {
	var f editFlags
	var fragment, image string
	var replicas int64
	var env []string
	cmd := &cobra.Command{
		Use:   "add APP SERVICE (--image REF | --from-file F) [--replicas N] [--env KEY=VALUE ...]",
		Short: "Add a service, from flags or a TOML fragment holding one [[spec.services]] table",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var s manifest.Service
			if fragment != "" {
				var err error
				if s, err = serviceFragment(cmd, fragment); err != nil {
					return err
				}
			} else if image == "" {
				return fmt.Errorf("give the service's source: --image REF, or --from-file F with a [[spec.services]] table (source_required)")
			}
			if s.Name != "" && s.Name != args[1] {
				return fmt.Errorf("--from-file names service %q, not %q (name_mismatch)", s.Name, args[1])
			}
			s.Name = args[1]
			if image != "" {
				s.Source = manifest.Source{Type: manifest.SourceImage, Image: image}
			}
			if cmd.Flags().Changed("replicas") {
				s.Replicas = manifest.NewInt(replicas)
			}
			pairs, err := envPairs(env)
			if err != nil {
				return err
			}
			for k, v := range pairs {
				if s.Environment == nil {
					s.Environment = map[string]string{}
				}
				s.Environment[k] = v
			}
			return runFieldEdit(cmd, &f, args, func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
				return c.AddService(cmd.Context(), args[0], s, o)
			})
		},
	}
	cmd.Flags().StringVar(&fragment, "from-file", "", "read the service from this TOML file")
	cmd.Flags().StringVar(&image, "image", "", "run this image (replaces the fragment's source)")
	cmd.Flags().Int64Var(&replicas, "replicas", 1, "replica count (0 keeps it stopped)")
	cmd.Flags().StringArrayVar(&env, "env", nil, "an environment variable, KEY=VALUE (repeatable)")
	f.add(cmd)
	return cmd
}

func newServiceRemoveCommand() *cobra.Command {
	return newEditRemoveCommand("remove APP SERVICE", "Remove a service (refused while a job, route or export names it)", 2,
		func(cmd *cobra.Command, c *client.Client, args []string, o client.EditOptions) (api.FieldEditResponse, error) {
			return c.RemoveService(cmd.Context(), args[0], args[1], o)
		})
}
