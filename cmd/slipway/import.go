package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/manifest/importer"
)

// maxImportBytes bounds the file read: every dialect caps its own manifests
// well below this.
const maxImportBytes = importer.MaxBytes

// newAppImportCommand is `slipway app import`: translate another platform's
// manifest into a native one. The manifest goes to stdout and diagnostics to
// stderr, so `slipway app import … > app.toml` keeps them apart.
func newAppImportCommand() *cobra.Command {
	var from, file, format string
	var opts importer.Options
	cmd := &cobra.Command{
		Use:   "import --from gordon|hakopod|skali|ply|compose|auto --file FILE",
		Short: "Translate a gordon, hakopod, skali, ply or Docker Compose manifest into a Slipway manifest",
		Long: `Translate a manifest written for another platform into a native Slipway
manifest, printed on stdout. Each field that changes meaning or is dropped is
reported on stderr as "warning: <source field>: <message>"; each field that
cannot be translated faithfully as "error: <source field>: <message>".

Exit status 0: the manifest is a faithful, valid translation (warnings allowed).
Exit status 1: at least one error; the manifest printed (if any) leaves the
untranslatable parts out, and is still valid.

Sources that build from their own project (skali build, ply apps and ./dir
members, Compose build and config files) need --repository: the imported
manifest then builds repository = "self" and names the repository in
spec.manifest.

Docker Compose files are read with Compose's own loader. Their ${VAR}
interpolations become Slipway variables; published ports become routes
when --domain is given (one service: the domain itself; several: a
subdomain per service), and are reported otherwise.

--from auto detects the dialect from the file name (compose.yaml,
docker-compose.yml, stack.toml) and else from its contents.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAppImport(cmd.OutOrStdout(), cmd.ErrOrStderr(), cmd.InOrStdin(), from, file, format, opts)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "source dialect: gordon, hakopod, skali, ply, compose or auto")
	cmd.Flags().StringVar(&file, "file", "", "manifest file to import (- for stdin)")
	cmd.Flags().StringVar(&opts.Name, "name", "", "application name (default: the name in the file)")
	cmd.Flags().StringVar(&opts.Repository, "repository", "", "clone URL of the repository the file lives in; needed when the source builds from its own project")
	cmd.Flags().StringVar(&opts.Branch, "branch", "main", "branch of --repository the manifest is read from")
	cmd.Flags().StringVar(&opts.ManifestPath, "manifest-path", "slipway.toml", "where the Slipway manifest will live in --repository")
	cmd.Flags().StringVar(&opts.Domain, "domain", "", "Compose: the hostname published ports are routed on")
	cmd.Flags().StringVar(&format, "format", "toml", "output format: toml or json")
	_ = cmd.MarkFlagRequired("from")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func runAppImport(stdout, stderr io.Writer, stdin io.Reader, from, file, format string, opts importer.Options) error {
	if format != "toml" && format != "json" {
		return &exitError{code: 2, err: fmt.Errorf("--format: %q is neither toml nor json (format_invalid)", format)}
	}
	data, err := readImportFile(stdin, file)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if file != "-" {
		opts.Filename = file
	}
	dialect := from
	if from == importer.Auto {
		dialect, err = importer.Detect(data, file)
		if err != nil {
			return &exitError{code: 1, err: err}
		}
		fmt.Fprintf(stderr, "detected: %s\n", dialect)
	}
	res, err := importer.Import(dialect, data, opts)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("--from: %w", err)}
	}
	for _, d := range res.Diagnostics {
		fmt.Fprintln(stderr, d.String())
	}
	if res.Manifest != nil {
		out, err := importer.Encode(res.Manifest, format)
		if err != nil {
			return &exitError{code: 1, err: err}
		}
		if _, err := stdout.Write(out); err != nil {
			return fmt.Errorf("write manifest: %w", err)
		}
	}
	if !res.OK() {
		errs := 0
		for _, d := range res.Diagnostics {
			if d.Severity == importer.SeverityError {
				errs++
			}
		}
		return &exitError{code: 1, err: fmt.Errorf("import: %d field(s) could not be translated faithfully (import_incomplete)", errs)}
	}
	return nil
}

func readImportFile(stdin io.Reader, file string) ([]byte, error) {
	var r io.Reader
	if file == "-" {
		r = stdin
	} else {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("--file: %w (file_unreadable)", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxImportBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--file: read %s: %w (file_unreadable)", file, err)
	}
	if len(data) > maxImportBytes {
		return nil, fmt.Errorf("--file: %s is larger than %d bytes (file_too_large)", file, maxImportBytes)
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, errors.New("--file: the file is empty (file_empty)")
	}
	return data, nil
}
