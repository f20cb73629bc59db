// Package backupctl backs up and restores what environments keep: named
// volumes, archived file by file by a short-lived container (the slipway
// binary's `archive` command) on the volume's node, and Postgres services,
// dumped with pg_dump run in the service's own image. Either way the
// container streams a tar archive to the worker over a unix socket the
// worker mounts into it, with a token only that run knows, and the worker
// streams it on to the environment's target (backupstore): never a shell
// string, never the whole archive in memory.
//
// Restore stops the services that use the data (every service but the
// database itself for Postgres), copies the archive back, checking its
// checksum, and starts them again; one that fails leaves them stopped and
// says why on the restore, which holds the environment until a deployment
// succeeds. Retention deletes scheduled backups past keep_last or older
// than keep_days, always keeping the newest.
//
// It joins the store, the pipeline (what an environment runs), the Swarm
// driver and backupstore. It must not import app, views, cmd or jobs.
package backupctl
