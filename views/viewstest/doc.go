// Package viewstest lists what the dashboard's templates point at: every
// form action, formaction, hx-get/hx-post/hx-put/hx-patch/hx-delete and
// link, read from the Go that templ generates, as a path pattern in which
// "*" stands for one path segment made at run time (an id, a name).
//
// Tests use it twice: app's route test checks that each names a registered
// route with the method the element uses, and the browser tests check that
// every form was submitted by a click. It reads source files only and
// depends on no package of this module.
package viewstest
