package service

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CodeInvalidCharacters is the code of a free-text field that holds a
// control character (NUL, escape, line breaks) or is not UTF-8. Postgres
// cannot store NUL in text, and the other control characters only ever
// arrive to forge log lines or terminal output.
const CodeInvalidCharacters = "invalid_characters"

// CheckText trims a free-text value (a team, token or member name) and
// checks it is valid UTF-8 without control characters and 1–maxRunes
// characters long. lengthCode is the field's code for a bad length; label
// names the field in the message ("team name").
func CheckText(field, lengthCode, label, s string, maxRunes int) (string, error) {
	s = strings.TrimSpace(s)
	if err := CheckCharacters(field, label, s); err != nil {
		return "", err
	}
	if s == "" || utf8.RuneCountInString(s) > maxRunes {
		return "", &InputError{Field: field, Code: lengthCode, Message: fmt.Sprintf("%s must be 1–%d characters", label, maxRunes)}
	}
	return s, nil
}

// CheckCharacters refuses s when it is not UTF-8 or holds a control
// character; it is the check every free-text input goes through before it
// reaches the store.
func CheckCharacters(field, label, s string) error {
	if !utf8.ValidString(s) {
		return &InputError{Field: field, Code: CodeInvalidCharacters, Message: label + " is not valid UTF-8 text"}
	}
	if i := strings.IndexFunc(s, unicode.IsControl); i >= 0 {
		return &InputError{Field: field, Code: CodeInvalidCharacters,
			Message: fmt.Sprintf("%s must not contain control characters (found %U at byte %d)", label, []rune(s[i:])[0], i)}
	}
	return nil
}
