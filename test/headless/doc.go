// Package headless starts the headless Chromium that the dashboard's
// browser tests drive through chromedp: the one place that says where
// the browser is, which flags every test runs it with (headless, no
// sandbox, no background networking, a fresh profile) and when a test
// skips for want of it.
//
// It is for tests only and must not be imported by product code.
package headless
