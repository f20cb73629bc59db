package manifest

import (
	"fmt"
	"testing"
)

// largeManifest builds a 64-service application using every feature that
// renders or hashes: variables in every allowed field, files, mounts,
// secrets, dependencies, routes, jobs, environments and previews.
func largeManifest() *Manifest {
	const n = 64
	m := &Manifest{APIVersion: APIVersion, Kind: Kind, Metadata: Metadata{Name: "large"}}
	s := &m.Spec
	s.Variables = map[string]Value{"replicas": IntValue(2), "domain": StringValue("example.com"), "port": IntValue(8080), "auth_env": StringValue("${{ env.name }}")}
	s.Environments = map[string]EnvironmentBlock{
		"staging":    {Variables: map[string]Value{"domain": StringValue("staging.example.com")}},
		"production": {PromoteFrom: "staging", Variables: map[string]Value{"replicas": IntValue(3)}},
	}
	s.Previews = &Previews{Variables: map[string]Value{"domain": StringValue("${{ env.slug }}.dev.example.com")}}
	for i := range n {
		name := fmt.Sprintf("svc%02d", i)
		svc := Service{
			Name:        name,
			Source:      Source{Type: SourceImage, Image: fmt.Sprintf("ghcr.io/example/%s:1.%d.0", name, i)},
			Replicas:    &Int{Ref: "${{ vars.replicas }}"},
			Environment: map[string]string{},
			Command:     []string{"/bin/" + name, "--origin=https://${{ vars.domain }}"},
			Arguments:   []string{"--env", "${{ env.name }}", "--deployment", "${{ deployment.id }}"},
			Healthcheck: &Healthcheck{Type: HealthcheckHTTP, Port: &Int{Ref: "${{ vars.port }}"}, Path: "/health"},
			Resources:   &Resources{CPUMillis: NewInt(500), MemoryBytes: NewInt(256 << 20)},
			Mounts:      []Mount{{Volume: fmt.Sprintf("data%02d", i), Target: "/var/lib/" + name}},
			Files: []File{
				{Target: "/etc/" + name + "/motd", Content: "hello ${{ vars.domain }}"},
				{Target: "/etc/" + name + "/config.yaml", Content: "listen: 8080\n"},
			},
			Secrets: []SecretMount{{Name: "db-password", Target: "/run/secrets/db-password"}},
			Rollout: &Rollout{Order: RolloutStopFirst, MonitorSeconds: NewInt(30)},
		}
		for k := range 16 {
			svc.Environment[fmt.Sprintf("KEY_%02d", k)] = fmt.Sprintf("value-%d-${{ vars.domain }}-${{ vars.auth_env }}", k)
		}
		if i > 0 {
			svc.DependsOn = []string{fmt.Sprintf("svc%02d", i-1)}
		}
		s.Services = append(s.Services, svc)
		s.Volumes = append(s.Volumes, Volume{Name: fmt.Sprintf("data%02d", i)})
		s.Routes = append(s.Routes, Route{Name: name, Hostname: name + ".${{ vars.domain }}", Service: name, Port: 8080, Visibility: VisibilityPublic})
	}
	for i := range 16 {
		s.Jobs = append(s.Jobs, Job{Name: fmt.Sprintf("job%02d", i), Service: fmt.Sprintf("svc%02d", 48+i), Command: []string{"migrate", "${{ env.name }}"}})
	}
	s.Secrets = []SecretDeclaration{{Name: "db-password", Generate: Generate{Type: GenerateRandom, Bytes: 32}}}
	return m
}

func TestLargeManifest(t *testing.T) {
	t.Parallel()
	m := largeManifest()
	if errs := ValidateReferences(m); len(errs) > 0 {
		t.Fatal(errs)
	}
	if _, errs := Render(m, RenderContext{Environment: "production", DeploymentID: "d"}); len(errs) > 0 {
		t.Fatal(errs)
	}
}

func BenchmarkRender(b *testing.B) {
	m := largeManifest()
	rc := RenderContext{Environment: "production", DeploymentID: "d"}
	b.ReportAllocs()
	for b.Loop() {
		if _, errs := Render(m, rc); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

func BenchmarkValidateReferences(b *testing.B) {
	m := largeManifest()
	b.ReportAllocs()
	for b.Loop() {
		if errs := ValidateReferences(m); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

func BenchmarkSpecHash(b *testing.B) {
	m := largeManifest()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SpecHash(m, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDiff(b *testing.B) {
	old := largeManifest()
	next := largeManifest()
	next.Spec.Services[10].Replicas = NewInt(5)
	b.ReportAllocs()
	for b.Loop() {
		if len(Diff(old, next)) != 1 {
			b.Fatal("want one change")
		}
	}
}
