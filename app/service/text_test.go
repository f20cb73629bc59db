package service_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
)

func TestCheckText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want, code string
	}{
		{"plain", "  Acme Ltd  ", "Acme Ltd", ""},
		{"unicode", "Équipe ☃", "Équipe ☃", ""},
		{"NUL", "x\x00y", "", service.CodeInvalidCharacters},
		{"escape", "x\x1b[31mred", "", service.CodeInvalidCharacters},
		{"CRLF inside", "x\r\nX-Injected: 1", "", service.CodeInvalidCharacters},
		{"DEL", "x\x7f", "", service.CodeInvalidCharacters},
		{"C1 control", "x\u0085y", "", service.CodeInvalidCharacters},
		{"not UTF-8", "x\xffy", "", service.CodeInvalidCharacters},
		{"empty", "   ", "", "team_name_invalid"},
		{"too long", strings.Repeat("a", 101), "", "team_name_invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := service.CheckText("team", "team_name_invalid", "team name", tt.in, 100)
			var ie *service.InputError
			switch {
			case tt.code == "" && err != nil:
				t.Fatalf("CheckText(%q) = %v", tt.in, err)
			case tt.code == "" && got != tt.want:
				t.Fatalf("CheckText(%q) = %q, want %q", tt.in, got, tt.want)
			case tt.code != "" && (!errors.As(err, &ie) || ie.Code != tt.code || ie.Field != "team"):
				t.Fatalf("CheckText(%q) error = %v, want code %s on team", tt.in, err, tt.code)
			}
		})
	}
	// Team and token names and e-mail addresses all go through it.
	for _, check := range []func(string) error{
		func(s string) error { _, err := service.CheckTeamName(s); return err },
		func(s string) error { _, err := service.CheckEmail(s); return err },
	} {
		var ie *service.InputError
		if err := check("a\x00b@example.com"); !errors.As(err, &ie) || ie.Code != service.CodeInvalidCharacters {
			t.Errorf("NUL: %v, want %s", err, service.CodeInvalidCharacters)
		}
	}
}
