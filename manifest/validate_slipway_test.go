package manifest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/manifest"
)

func TestValidate_ScheduledJobs(t *testing.T) {
	t.Parallel()
	vol := "[[spec.volumes]]\nname = \"data\"\n"
	web := svcNamed("web", "") + "[[spec.services.mounts]]\nvolume = \"data\"\ntarget = \"/data\"\n"
	job := func(extra string) string {
		return "[[spec.jobs]]\nname = \"report\"\nservice = \"web\"\n" + extra + "\n"
	}
	runValidateCases(t, []validateCase{
		{name: "cron and descriptors", doc: vol + web + job("schedule = \"*/5 3 * * 1-5\"\nconcurrency = \"replace\"") +
			"[[spec.jobs]]\nname = \"nightly\"\nservice = \"web\"\nschedule = \"@daily\"\nrun = \"schedule\"\n"},
		{name: "schedule from a variable", doc: vol + web + job("schedule = \"${{ vars.report }}\"") + "[spec.variables]\nreport = \"@hourly\"\n"},
		{name: "mistakes", doc: vol + web + job("schedule = \"every day\"\nconcurrency = \"allow\"\nstop_service = true\nvolume_access = \"exclusive\"") +
			"[[spec.jobs]]\nname = \"b\"\nservice = \"web\"\nrun = \"schedule\"\n" +
			"[[spec.jobs]]\nname = \"c\"\nservice = \"web\"\nrun = \"before-rollout\"\nschedule = \"@every 5m\"\n" +
			"[[spec.jobs]]\nname = \"d\"\nservice = \"web\"\nconcurrency = \"forbid\"\n" +
			"[[spec.jobs]]\nname = \"e\"\nservice = \"web\"\nschedule = \"0 25 * * *\"\n" +
			"[[spec.jobs]]\nname = \"f\"\nservice = \"web\"\nschedule = \"0 3 * *\"\n",
			want: []wantError{
				{path: "spec.jobs[0].schedule", code: "job_schedule_invalid", message: "five"},
				{path: "spec.jobs[0].concurrency", code: "job_concurrency_invalid"},
				{path: "spec.jobs[0].stop_service", code: "job_schedule_stops_services"},
				{path: "spec.jobs[0].volume_access", code: "job_schedule_stops_services"},
				{path: "spec.jobs[1].schedule", code: "job_schedule_missing"},
				{path: "spec.jobs[2].run", code: "job_schedule_run_conflict"},
				{path: "spec.jobs[2].schedule", code: "job_schedule_invalid", message: "@hourly"},
				{path: "spec.jobs[3].concurrency", code: "job_concurrency_invalid", message: "scheduled jobs"},
				{path: "spec.jobs[4].schedule", code: "job_schedule_invalid"},
				{path: "spec.jobs[5].schedule", code: "job_schedule_invalid", message: "4 fields"},
			}},
		{name: "a scheduled job is not ordered against before-rollout jobs", doc: vol + svcNamed("db", "") + svcNamed("api", "depends_on = [\"db\"]") +
			"[[spec.jobs]]\nname = \"cleanup\"\nservice = \"api\"\nschedule = \"@daily\"\n[[spec.jobs]]\nname = \"init\"\nservice = \"db\"\n"},
	})
}

func TestValidate_Backups(t *testing.T) {
	t.Parallel()
	vol := "[[spec.volumes]]\nname = \"data\"\n"
	db := svcNamed("db", "") + "[spec.services.postgres]\ndatabase = \"notes\"\npassword_secret = \"pw\"\n[[spec.services.secrets]]\nname = \"pw\"\ntarget = \"/run/secrets/pw\"\n"
	runValidateCases(t, []validateCase{
		{name: "valid", doc: vol + db + svc +
			"[[spec.backups]]\nname = \"db\"\nservice = \"db\"\nschedule = \"@daily\"\nkeep_last = 14\nkeep_days = 30\n" +
			"[[spec.backups]]\nname = \"files\"\nvolume = \"data\"\n"},
		{name: "mistakes", doc: vol + svc + svcNamed("db", "") + "[spec.services.postgres]\ndatabase = \"-x\"\nuser = \"a b\"\nport = 70000\npassword_secret = \"pw\"\n" +
			"[[spec.backups]]\nname = \"a\"\nvolume = \"data\"\nservice = \"db\"\n" +
			"[[spec.backups]]\nname = \"a\"\n" +
			"[[spec.backups]]\nname = \"c\"\nvolume = \"ghost\"\nschedule = \"@yearly\"\nkeep_last = 0\nkeep_days = 4000\n" +
			"[[spec.backups]]\nname = \"d\"\nservice = \"ghost\"\n" +
			"[[spec.backups]]\nname = \"e\"\nservice = \"web\"\n",
			want: []wantError{
				{path: "spec.services[1].postgres.database", code: "postgres_name_invalid"},
				{path: "spec.services[1].postgres.user", code: "postgres_name_invalid"},
				{path: "spec.services[1].postgres.port", code: "value_out_of_range"},
				{path: "spec.services[1].postgres.password_secret", code: "postgres_password_secret_missing"},
				{path: "spec.backups[0]", code: "backup_subject_invalid", message: "not both"},
				{path: "spec.backups[1].name", code: "backup_name_duplicate"},
				{path: "spec.backups[1]", code: "backup_subject_invalid"},
				{path: "spec.backups[2].volume", code: "backup_volume_missing"},
				{path: "spec.backups[2].schedule", code: "backup_schedule_invalid"},
				{path: "spec.backups[2].keep_last", code: "value_out_of_range"},
				{path: "spec.backups[2].keep_days", code: "value_out_of_range"},
				{path: "spec.backups[3].service", code: "backup_service_missing"},
				{path: "spec.backups[4].service", code: "backup_service_not_postgres"},
			}},
	})
}

// TestValidate_PiqueldRefusesTheExtension: a piqueld.dev manifest stays
// exactly as the piqueld contract says.
func TestValidate_PiqueldRefusesTheExtension(t *testing.T) {
	t.Parallel()
	doc := "api_version = \"piqueld.dev/v1alpha1\"\nkind = \"Application\"\n[metadata]\nname = \"notes\"\n" +
		"[[spec.volumes]]\nname = \"data\"\n" + svcNamed("db", "") + "[spec.services.postgres]\n" +
		"[[spec.jobs]]\nname = \"report\"\nservice = \"db\"\nschedule = \"@daily\"\nconcurrency = \"forbid\"\n" +
		"[[spec.jobs]]\nname = \"other\"\nservice = \"db\"\nrun = \"schedule\"\n" +
		"[[spec.backups]]\nname = \"db\"\nservice = \"db\"\n[spec.previews]\nschedules = true\n"
	m, err := manifest.Decode([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	matchErrors(t, manifest.Validate(m, manifest.ValidateOptions{}), []wantError{
		{path: "spec.jobs[1].run", code: "job_run_invalid", message: "the only run point"},
		{path: "spec.services[0].postgres", code: "extension_api_version_invalid", message: "slipway.dev/v1alpha1"},
		{path: "spec.jobs[0].schedule", code: "extension_api_version_invalid"},
		{path: "spec.jobs[0].concurrency", code: "extension_api_version_invalid"},
		{path: "spec.backups", code: "extension_api_version_invalid"},
		{path: "spec.previews.schedules", code: "extension_api_version_invalid"},
	})
}

func TestParseSchedule_Next(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 14, 10, 17, 30, 0, time.UTC)
	for _, tt := range []struct{ spec, want string }{
		{"* * * * *", "2026-03-14T10:18:00Z"},
		{"@hourly", "2026-03-14T11:00:00Z"},
		{"@daily", "2026-03-15T00:00:00Z"},
		{"@weekly", "2026-03-15T00:00:00Z"}, // 14 March 2026 is a Saturday
		{"@monthly", "2026-04-01T00:00:00Z"},
		{"30 2 * * 1", "2026-03-16T02:30:00Z"},
	} {
		s, err := manifest.ParseSchedule(tt.spec)
		if err != nil {
			t.Fatalf("%s: %v", tt.spec, err)
		}
		if got := s.Next(at).Format(time.RFC3339); got != tt.want {
			t.Errorf("%s: next after %s = %s, want %s", tt.spec, at.Format(time.RFC3339), got, tt.want)
		}
	}
	// Another zone's clock reads the same instant: schedules are UTC.
	paris := at.In(time.FixedZone("CET", 3600))
	s, _ := manifest.ParseSchedule("0 11 * * *")
	if got := s.Next(paris); !got.Equal(time.Date(2026, 3, 14, 11, 0, 0, 0, time.UTC)) {
		t.Errorf("next = %s, want 11:00 UTC", got)
	}
	for _, bad := range []string{"", "@every 1h", "@reboot", "CRON_TZ=Europe/Paris 0 3 * * *", "0 0 3 * * *", "61 * * * *"} {
		if _, err := manifest.ParseSchedule(bad); err == nil || !strings.Contains(err.Error(), "") {
			t.Errorf("%q parsed", bad)
		}
	}
}
