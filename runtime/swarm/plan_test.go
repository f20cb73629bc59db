package swarm

import (
	"errors"
	"testing"

	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/api/types/volume"
)

func asError(err error, target **Error) bool { return errors.As(err, target) }

// observedFrom pretends every desired object exists as desired.
func observedFrom(st DesiredState) Observed {
	obs := Observed{Env: EnvRef{ID: st.EnvID, ShortID: "a1b2c3"}}
	for i, n := range st.Networks {
		obs.Networks = append(obs.Networks, network.Summary{Name: n.Name, ID: "net" + string(rune('a'+i)), Labels: n.Labels})
	}
	for _, v := range st.Volumes {
		obs.Volumes = append(obs.Volumes, &volume.Volume{Name: v.Name, Labels: v.Labels})
	}
	for _, c := range st.Configs {
		obs.Configs = append(obs.Configs, swarm.Config{ID: "cfg-" + c.Name, Spec: c})
	}
	for _, s := range st.Secrets {
		obs.Secrets = append(obs.Secrets, swarm.Secret{ID: "sec-" + s.Name, Spec: s})
	}
	for _, s := range st.Services {
		spec := s.Spec
		// Swarm stores network attachments by ID.
		var nets []swarm.NetworkAttachmentConfig
		for _, a := range spec.TaskTemplate.Networks {
			for _, n := range obs.Networks {
				if n.Name == a.Target {
					a.Target = n.ID
				}
			}
			nets = append(nets, a)
		}
		spec.TaskTemplate.Networks = nets
		obs.Services = append(obs.Services, swarm.Service{ID: "svc-" + s.Service, Spec: spec})
	}
	return obs
}

func TestPlan(t *testing.T) {
	want, err := Desired(sampleInput())
	if err != nil {
		t.Fatal(err)
	}
	t.Run("from nothing creates everything", func(t *testing.T) {
		actions, err := Plan(Observed{}, want)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(actions.Filter(KindService, OpCreate)); got != 2 {
			t.Errorf("%d service creates", got)
		}
		if got := len(actions.Filter(KindNetwork, OpCreate)); got != 2 {
			t.Errorf("%d network creates", got)
		}
		if actions[0].Kind != KindNetwork {
			t.Errorf("first action %v; networks go first", actions[0])
		}
	})
	t.Run("unchanged plans nothing", func(t *testing.T) {
		actions, err := Plan(observedFrom(want), want)
		if err != nil || len(actions) != 0 {
			t.Fatalf("%v %v", actions, err)
		}
	})
	t.Run("drift is reported field by field", func(t *testing.T) {
		obs := observedFrom(want)
		three := uint64(3)
		obs.Services[0].Spec.Mode.Replicated = &swarm.ReplicatedService{Replicas: &three}
		cs := *obs.Services[0].Spec.TaskTemplate.ContainerSpec
		cs.Image = "example/web:hacked"
		cs.Env = append([]string{"EXTRA=1"}, cs.Env...)
		obs.Services[0].Spec.TaskTemplate.ContainerSpec = &cs
		actions, err := Plan(obs, want)
		if err != nil {
			t.Fatal(err)
		}
		up := actions.Filter(KindService, OpUpdate)
		if len(up) != 1 || up[0].Service != "web" {
			t.Fatalf("updates %v", up)
		}
		fields := map[string]bool{}
		for _, d := range up[0].Drift {
			fields[d.Field] = true
		}
		if !fields["replicas"] || !fields["image"] || !fields["environment"] || len(fields) != 3 {
			t.Fatalf("drift %v", up[0].Drift)
		}
	})
	t.Run("removed service and stale objects are removed, volumes kept", func(t *testing.T) {
		obs := observedFrom(want)
		in := sampleInput()
		in.Manifest.Spec.Services = in.Manifest.Spec.Services[1:]
		in.Manifest.Spec.Jobs = nil
		in.Routed = nil
		fewer, err := Desired(in)
		if err != nil {
			t.Fatal(err)
		}
		actions, err := Plan(obs, fewer)
		if err != nil {
			t.Fatal(err)
		}
		if rm := actions.Filter(KindService, OpRemove); len(rm) != 1 || rm[0].Service != "web" {
			t.Errorf("service removes %v", rm)
		}
		if rm := actions.Filter(KindNetwork, OpRemove); len(rm) != 1 {
			t.Errorf("the ingress network should go: %v", rm)
		}
		if len(actions.Filter(KindVolume, OpRemove)) != 0 {
			t.Error("a plan removes a volume")
		}
		if len(actions.Filter(KindConfig, OpRemove)) == 0 || len(actions.Filter(KindSecret, OpRemove)) == 0 {
			t.Errorf("web's configs and secrets should go: %v", actions)
		}
	})
	t.Run("job runs of earlier deployments are removed, this one's kept", func(t *testing.T) {
		obs := observedFrom(want)
		current, _ := want.Job("migrate")
		old := current.Spec
		old.Name = JobServiceName("a1b2c3", "dep-0", "migrate")
		obs.Services = append(obs.Services,
			swarm.Service{ID: "job-now", Spec: current.Spec},
			swarm.Service{ID: "job-old", Spec: old})
		actions, err := Plan(obs, want)
		if err != nil {
			t.Fatal(err)
		}
		if len(actions) != 1 || actions[0].Op != OpRemove || actions[0].ID != "job-old" || actions[0].Job != "migrate" {
			t.Fatalf("actions %v", actions)
		}
	})
	t.Run("foreign object with our name is refused", func(t *testing.T) {
		obs := Observed{Foreign: []ForeignObject{{Kind: KindService, Name: want.Services[0].Spec.Name, ID: "x"}}}
		_, err := Plan(obs, want)
		var e *Error
		if !asError(err, &e) || e.Code != CodeNameConflict {
			t.Fatalf("got %v, want name_conflict", err)
		}
	})
}
