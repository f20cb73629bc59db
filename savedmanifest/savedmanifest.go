package savedmanifest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/slipwayhq/slipway/manifest"
	"github.com/slipwayhq/slipway/store"
)

// DecodeError is a saved revision whose manifest does not decode.
type DecodeError struct {
	Revision int64
	Err      error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("decode saved revision %d: %v", e.Revision, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Current returns the application's current revision and its manifest,
// decoded strictly (manifest.Decode). Both are zero, with no error, when
// the application has no saved manifest. When the manifest does not decode
// it returns the revision and a *DecodeError.
func Current(ctx context.Context, st *store.Store, teamID, appID string) (*manifest.Manifest, store.ManifestRevision, error) {
	return current(ctx, st, teamID, appID, decodeStrict)
}

// CurrentLenient is Current decoding with DecodeLenient.
func CurrentLenient(ctx context.Context, st *store.Store, teamID, appID string) (*manifest.Manifest, store.ManifestRevision, error) {
	return current(ctx, st, teamID, appID, DecodeLenient)
}

// DecodeLenient decodes a revision's normalized JSON with encoding/json
// alone: unlike manifest.Decode it ignores unknown fields and trailing
// data and does not report malformed integers, variables or repositories.
// A failure is a *DecodeError.
func DecodeLenient(rev store.ManifestRevision) (*manifest.Manifest, error) {
	var m manifest.Manifest
	if err := json.NewDecoder(bytes.NewReader(rev.Manifest)).Decode(&m); err != nil {
		return nil, &DecodeError{Revision: rev.Revision, Err: err}
	}
	return &m, nil
}

func decodeStrict(rev store.ManifestRevision) (*manifest.Manifest, error) {
	m, err := manifest.Decode(rev.Manifest, "json")
	if err != nil {
		return nil, &DecodeError{Revision: rev.Revision, Err: err}
	}
	return m, nil
}

func current(ctx context.Context, st *store.Store, teamID, appID string, decode func(store.ManifestRevision) (*manifest.Manifest, error)) (*manifest.Manifest, store.ManifestRevision, error) {
	rev, err := st.GetCurrentManifestRevision(ctx, teamID, appID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, store.ManifestRevision{}, nil
	}
	if err != nil {
		return nil, store.ManifestRevision{}, err
	}
	m, err := decode(rev)
	return m, rev, err
}
