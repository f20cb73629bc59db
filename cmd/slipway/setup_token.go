package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/slipwayhq/slipway/app/service"
	"github.com/slipwayhq/slipway/store"
)

// setupTokenFile is where serve and dev write the setup token, under the
// data directory, readable by the daemon's user only.
const setupTokenFile = "setup-token"

// setupToken makes sure an installation with no users has a setup token
// and returns it when this process can show it: freshly issued (then it is
// logged once and written to <dataDir>/setup-token, mode 0600), or read
// back from that file while it is still the valid one. "" when users
// exist, or when another process issued the token and this one has no copy.
func setupToken(ctx context.Context, st *store.Store, dataDir string, logger *slog.Logger) (string, error) {
	n, err := st.CountUsers(ctx)
	if err != nil || n > 0 {
		return "", err
	}
	path := filepath.Join(dataDir, setupTokenFile)
	token, err := service.IssueSetupToken(ctx, st)
	if err != nil {
		return "", fmt.Errorf("setup token: %w", err)
	}
	if token != "" {
		if werr := writeSetupToken(path, token); werr != nil {
			logger.Warn("first run: the setup token could not be written to a file; it is only in this log line", "file", path, "err", werr)
		}
		logger.Warn("first run: no account exists yet; open /setup and enter this setup token (shown once; also in the file), or run slipway admin create-owner",
			"setup_token", token, "file", path)
		return token, nil
	}
	b, err := os.ReadFile(path)
	if err == nil {
		kept := strings.TrimSpace(string(b))
		if ok, verr := service.SetupTokenValid(ctx, st, kept); verr == nil && ok {
			logger.Warn("first run: no account exists yet; open /setup with the setup token in the file, or run slipway admin create-owner", "file", path)
			return kept, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		logger.Warn("first run: cannot read the setup token file", "file", path, "err", err)
	}
	logger.Warn("first run: no account exists yet and the setup token was issued by another serve process: find it in that process's log or data directory, or run slipway admin create-owner")
	return "", nil
}

func writeSetupToken(path, token string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// Replace whatever is there; O_EXCL on a fresh name keeps the mode
	// 0600 from the start, with no window where the file is readable.
	tmp := path + ".new"
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
