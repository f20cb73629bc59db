// Package importtest is the importers' shared test harness: golden files of
// each dialect's testdata, the round trip of every imported manifest through
// the native decoder and validator, and the fuzz property.
//
// Only _test files import it; it imports the importer and manifest packages
// and nothing that does I/O beyond reading testdata.
package importtest
