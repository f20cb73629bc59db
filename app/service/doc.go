// Package service holds the team operations the dashboard (package app) and
// the JSON API (package app/api) share: validate the input, write through
// the store, record the audit event. Each returns *InputError for bad input,
// naming the field, so both front ends report it the same way.
//
// It may import store, pipeline, jobs, manifest, savedmanifest and
// app/auth; it must not import Fiber, views or runtime.
package service
