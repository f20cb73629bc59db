// Package keyringtest makes keyrings for tests: one random key, never
// written anywhere. Only tests import it.
package keyringtest
