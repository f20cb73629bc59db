-- Certificate storage shared by every gateway (certmagic's Storage, served
-- to the gateways by serve): one row per key ("certificates/<issuer>/<host>/
-- <host>.crt", the ACME account, challenge tokens), and the named locks
-- certmagic takes around obtaining and renewing, so one certificate per
-- hostname is obtained once whichever gateway asks. Installation-wide: the
-- certificates are the gateways', not a team's. Values (private keys among
-- them) are sealed with the secret key like secrets, bound to their key;
-- size is the plaintext's.
CREATE TABLE cert_storage (
    key         text PRIMARY KEY CHECK (key <> ''),
    key_id      text NOT NULL,
    nonce       bytea NOT NULL,
    ciphertext  bytea NOT NULL,
    size        bigint NOT NULL CHECK (size >= 0),
    modified_at timestamptz NOT NULL DEFAULT now()
);

-- A lock is held by whoever wrote token until expires_at; the holder keeps
-- pushing expires_at forward, so a holder that died frees it soon.
CREATE TABLE cert_locks (
    name       text PRIMARY KEY,
    token      text NOT NULL,
    expires_at timestamptz NOT NULL
);
