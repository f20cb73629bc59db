package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/store/storetest"
)

func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	url := storetest.EmptyDatabaseURL(t)
	if c, _, err := newRootCommand().Find([]string{"migrate"}); err != nil || c.Name() != "migrate" {
		t.Fatalf("root command has no migrate subcommand: %v", err)
	}
	run := func(t *testing.T, check bool) (string, error) {
		t.Helper()
		cmd := newMigrateCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		err := runMigrate(t.Context(), cmd, url, check)
		return out.String(), err
	}
	tests := []struct {
		name    string
		check   bool
		want    string
		wantErr bool
	}{
		{"check before", true, "schema_outdated", true},
		{"migrate", false, "migrated database from version 0", false},
		{"migrate again", false, "already up to date", false},
		{"check after", true, "database is up to date", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, tt.check)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v (output %q)", err, tt.wantErr, out)
			}
			got := out
			if err != nil {
				got += err.Error()
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("output %q does not contain %q", got, tt.want)
			}
		})
	}
}
