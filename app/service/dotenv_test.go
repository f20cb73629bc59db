package service_test

import (
	"reflect"
	"testing"

	"github.com/slipwayhq/slipway/app/service"
)

func TestParseDotenv(t *testing.T) {
	t.Parallel()
	got, errs := service.ParseDotenv("# from heroku config\nexport LOG_LEVEL=info\nDATABASE_URL=\"postgres://db/app?x=1\"\nGREETING='hello # world'\nPORT=8080 # the port\n\nEMPTY=\n", "spec.services[0].environment")
	if len(errs) != 0 {
		t.Fatalf("errors %v", errs)
	}
	want := map[string]string{"LOG_LEVEL": "info", "DATABASE_URL": "postgres://db/app?x=1", "GREETING": "hello # world", "PORT": "8080", "EMPTY": ""}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	_, errs = service.ParseDotenv("A=1\n1BAD=x\nno equals\nA=2\nQ=\"open\n", "spec.services[0].environment")
	type e struct {
		line int
		code string
	}
	var gotErrs []e
	for _, fe := range errs {
		gotErrs = append(gotErrs, e{fe.Line, fe.Code})
	}
	wantErrs := []e{{2, "env_key_invalid"}, {3, "env_line_invalid"}, {4, "duplicate_key"}, {5, "env_value_invalid"}}
	if !reflect.DeepEqual(gotErrs, wantErrs) {
		t.Fatalf("errors %v, want %v (%v)", gotErrs, wantErrs, errs)
	}
	if round, errs := service.ParseDotenv(service.FormatDotenv(want), "f"); len(errs) != 0 || !reflect.DeepEqual(round, want) {
		t.Fatalf("FormatDotenv does not read back: %v %v", round, errs)
	}
}
