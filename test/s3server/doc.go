// Package s3server pins versitygw, a real S3 server (the Versity S3
// Gateway, here with its POSIX backend), as a tool of its own module, so
// its dependencies never enter Slipway's go.mod. Tests build it with
// backupstore/s3test and run it against a temporary directory.
package s3server
