package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/config"
)

// newConfigCommand is `slipway config`: check and print the daemon's
// configuration file.
func newConfigCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check the daemon's configuration, or print a commented default one",
	}
	cmd.AddCommand(newConfigValidateCommand(), newConfigDefaultCommand())
	return cmd
}

func newConfigValidateCommand() *cobra.Command {
	var format string
	var print bool
	cmd := &cobra.Command{
		Use:   "validate [--config FILE]",
		Short: "Check the configuration file and SLIPWAY_* variables together",
		Long: `Load the configuration exactly as serve, worker and dev do (defaults, then
the file, then the environment) and list every problem with its key, where
the value came from (file:line:column, env NAME) and a code. Exits 0 when it
is valid and 1 when it is not. --print shows the effective configuration,
secrets redacted. See docs/configuration.md for every key.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat("--format", format, "text", "json"); err != nil {
				return err
			}
			c, err := loadConfig(cmd, nil)
			var errs config.Errors
			if err != nil && !errors.As(err, &errs) {
				return err
			}
			out := cmd.OutOrStdout()
			if err := writeConfigErrors(out, format, errs); err != nil {
				return err
			}
			if len(errs) > 0 {
				noun := "errors"
				if len(errs) == 1 {
					noun = "error"
				}
				return &exitError{code: 1, err: fmt.Errorf("configuration: %d %s", len(errs), noun)}
			}
			if print {
				data, err := toml.Marshal(c.Redacted())
				if err != nil {
					return fmt.Errorf("encode configuration: %w", err)
				}
				_, err = out.Write(data)
				return err
			}
			if format == "text" {
				fmt.Fprintln(out, "configuration is valid")
			}
			return nil
		},
	}
	addConfigFlag(cmd)
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json")
	cmd.Flags().BoolVar(&print, "print", false, "print the effective configuration as TOML, secrets redacted")
	return cmd
}

func newConfigDefaultCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "default",
		Short: "Print a commented configuration file with every key at its default",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(config.DefaultFile())
			return err
		},
	}
}

// addConfigFlag gives a daemon command (serve, worker, dev, config
// validate) its --config flag.
func addConfigFlag(cmd *cobra.Command) {
	cmd.Flags().String("config", config.DefaultPath,
		"configuration file (env "+config.EnvConfigPath+"); the default one may be missing, a named one may not")
}

// loadConfig loads the configuration for a command with addConfigFlag.
// flagKeys maps the command's own flag names to configuration keys (such as
// "listen": "listen"): a flag the user set wins over file and environment,
// while its default never does.
func loadConfig(cmd *cobra.Command, flagKeys map[string]string) (config.Config, error) {
	return loadConfigOr(cmd, "", flagKeys)
}

// loadConfigOr is loadConfig with fallback in place of
// /etc/slipway/slipway.toml when neither --config nor SLIPWAY_CONFIG names
// a file: slipway dev passes <data-dir>/slipway.toml.
func loadConfigOr(cmd *cobra.Command, fallback string, flagKeys map[string]string) (config.Config, error) {
	o := config.Options{Fallback: fallback}
	if f := cmd.Flags().Lookup("config"); f != nil && f.Changed {
		o.Path, o.Explicit = f.Value.String(), true
	}
	names := make([]string, 0, len(flagKeys))
	for name := range flagKeys {
		names = append(names, name)
	}
	sort.Strings(names) // errors in a stable order
	for _, name := range names {
		key := flagKeys[name]
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			o.Overrides = append(o.Overrides, config.Override{Key: key, Value: f.Value.String(), Source: "flag --" + name})
		}
	}
	return o.Load()
}

// writeConfigErrors prints errors one a line, or as one JSON object
// {"valid": bool, "errors": [...]} like app validate.
func writeConfigErrors(w io.Writer, format string, errs config.Errors) error {
	if format == "json" {
		if errs == nil {
			errs = config.Errors{}
		}
		data, err := json.Marshal(struct {
			Valid  bool          `json:"valid"`
			Errors config.Errors `json:"errors"`
		}{len(errs) == 0, errs})
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	}
	for _, e := range errs {
		if _, err := fmt.Fprintln(w, e.Error()); err != nil {
			return err
		}
	}
	return nil
}
