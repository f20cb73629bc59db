package swarm

import (
	"context"
	"slices"
	"sort"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/swarm"
)

// Labels of a link network (beside LabelManaged, LabelTeam and LabelRole
// "link"). A link network belongs to no single environment, so it carries
// no LabelEnv: an environment's plan never sees or removes it.
const (
	LabelLinkExporterApp = "dev.slipway.link.exporter-app"
	LabelLinkExporterEnv = "dev.slipway.link.exporter-env"
	LabelLinkService     = "dev.slipway.link.service"
	LabelLinkImporterApp = "dev.slipway.link.importer-app"
	LabelLinkImporterEnv = "dev.slipway.link.importer-env"
	LabelLinkAlias       = "dev.slipway.link.alias"
	roleLink             = "link"
)

// LinkSpec is one link: the exported service of the exporting environment
// and every service of the importing environment share one attachable
// overlay network, on which the exported service answers to Alias
// (<service>.<application>).
type LinkSpec struct {
	TeamID        string
	ExporterAppID string
	ExporterEnvID string
	Service       string
	ImporterAppID string
	ImporterEnvID string
	Alias         string
}

// LinkNetwork is a link network that exists.
type LinkNetwork struct {
	ID   string
	Name string
	LinkSpec
}

// LinkAttachment is one link network a service of an environment joins.
type LinkAttachment struct {
	// NetworkID is the network's ID: Swarm records attachments by ID, so
	// desired and observed specs compare equal without a name lookup.
	NetworkID string
	// Service is the manifest service that joins; "" means every service
	// (and job) of the environment.
	Service string
	// Alias is the name the service answers to on the network, if any.
	Alias string
}

// LinkNetworkName names a link's network after everything that identifies
// it, alias included: renaming the exporting application gives the link a
// new network (Swarm cannot change a joined service's aliases in place
// without a rollout anyway).
func LinkNetworkName(l LinkSpec) string {
	return "slw-link-" + shortHash(l.ExporterEnvID+"\x00"+l.Service+"\x00"+l.ImporterEnvID+"\x00"+l.Alias, 20)
}

func (l LinkSpec) labels() map[string]string {
	return map[string]string{
		LabelManaged:         "true",
		LabelTeam:            l.TeamID,
		LabelRole:            roleLink,
		LabelLinkExporterApp: l.ExporterAppID,
		LabelLinkExporterEnv: l.ExporterEnvID,
		LabelLinkService:     l.Service,
		LabelLinkImporterApp: l.ImporterAppID,
		LabelLinkImporterEnv: l.ImporterEnvID,
		LabelLinkAlias:       l.Alias,
	}
}

func linkNetwork(n network.Summary) LinkNetwork {
	l := n.Labels
	return LinkNetwork{ID: n.ID, Name: n.Name, LinkSpec: LinkSpec{
		TeamID: l[LabelTeam], ExporterAppID: l[LabelLinkExporterApp], ExporterEnvID: l[LabelLinkExporterEnv],
		Service: l[LabelLinkService], ImporterAppID: l[LabelLinkImporterApp], ImporterEnvID: l[LabelLinkImporterEnv], Alias: l[LabelLinkAlias],
	}}
}

func isLinkNetwork(labels map[string]string) bool {
	return labels[LabelManaged] == "true" && labels[LabelRole] == roleLink
}

// ListLinkNetworks returns the team's link networks with one Engine call.
func (d *Driver) ListLinkNetworks(ctx context.Context, teamID string) ([]LinkNetwork, error) {
	list, err := d.engine.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(
		filters.Arg("label", LabelTeam+"="+teamID), filters.Arg("label", LabelRole+"="+roleLink))})
	if err != nil {
		return nil, engineErr("list link networks", err)
	}
	var out []LinkNetwork
	for _, n := range list {
		if isLinkNetwork(n.Labels) && n.Labels[LabelTeam] == teamID {
			out = append(out, linkNetwork(n))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// EnvLinks returns the link networks env's services join now, as
// attachments for DesiredInput.Links, so a deployment keeps them.
func (d *Driver) EnvLinks(ctx context.Context, env EnvRef) ([]LinkAttachment, error) {
	var nets []LinkNetwork
	for _, key := range []string{LabelLinkImporterEnv, LabelLinkExporterEnv} {
		list, err := d.engine.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("label", key+"="+env.ID))})
		if err != nil {
			return nil, engineErr("list link networks", err)
		}
		for _, n := range list {
			if isLinkNetwork(n.Labels) && n.Labels[key] == env.ID {
				nets = append(nets, linkNetwork(n))
			}
		}
	}
	return LinkAttachments(nets, env.ID), nil
}

// LinkAttachments turns link networks into the attachments of envID's
// services: every service joins the networks of its imports, and an
// exported service joins each of its exports' networks under the alias.
func LinkAttachments(nets []LinkNetwork, envID string) []LinkAttachment {
	var out []LinkAttachment
	seen := map[LinkAttachment]bool{}
	add := func(a LinkAttachment) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, n := range nets {
		if n.ImporterEnvID == envID {
			add(LinkAttachment{NetworkID: n.ID})
		}
		if n.ExporterEnvID == envID {
			add(LinkAttachment{NetworkID: n.ID, Service: n.Service, Alias: n.Alias})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].NetworkID != out[j].NetworkID {
			return out[i].NetworkID < out[j].NetworkID
		}
		return out[i].Service < out[j].Service
	})
	return out
}

// linkAttachmentsFor returns the network attachments of a service (or,
// with jobs set, a job run, which joins only its environment's imports).
func linkAttachmentsFor(links []LinkAttachment, service string, jobs bool) []swarm.NetworkAttachmentConfig {
	var out []swarm.NetworkAttachmentConfig
	for _, l := range links {
		switch {
		case l.Service == "":
			out = append(out, swarm.NetworkAttachmentConfig{Target: l.NetworkID})
		case l.Service == service && !jobs:
			out = append(out, swarm.NetworkAttachmentConfig{Target: l.NetworkID, Aliases: []string{l.Alias}})
		}
	}
	return out
}

// EnsureLinkNetwork creates the link's network unless it exists, and
// returns it. A same-named network without a link's labels is never used.
func (d *Driver) EnsureLinkNetwork(ctx context.Context, l LinkSpec) (LinkNetwork, error) {
	name := LinkNetworkName(l)
	list, err := d.engine.NetworkList(ctx, network.ListOptions{Filters: filters.NewArgs(filters.Arg("name", name))})
	if err != nil {
		return LinkNetwork{}, engineErr("list networks", err)
	}
	for _, n := range list {
		if n.Name != name {
			continue
		}
		if !isLinkNetwork(n.Labels) || n.Labels[LabelTeam] != l.TeamID {
			return LinkNetwork{}, foreignErr(KindNetwork, name)
		}
		return linkNetwork(n), nil
	}
	resp, err := d.engine.NetworkCreate(ctx, name, network.CreateOptions{Driver: "overlay", Scope: "swarm", Attachable: true, Labels: l.labels()})
	if err != nil {
		return LinkNetwork{}, engineErr("create network "+name, err)
	}
	d.log.InfoContext(ctx, "link network created", "network", name, "alias", l.Alias)
	return LinkNetwork{ID: resp.ID, Name: name, LinkSpec: l}, nil
}

// RemoveLinkNetwork removes a link network once no service uses it any
// more (SetLinkAttachments detached them).
func (d *Driver) RemoveLinkNetwork(ctx context.Context, n LinkNetwork) error {
	if err := d.removeInUse(ctx, "network "+n.Name, func() error { return d.engine.NetworkRemove(ctx, n.ID) }); err != nil {
		return err
	}
	d.log.InfoContext(ctx, "link network removed", "network", n.Name)
	return nil
}

// SetLinkAttachments makes every service of env join exactly the link
// networks want names, leaving its other networks alone; linkIDs are the
// IDs of every link network (so a link network env should leave is
// recognised). Job runs are left alone. It returns the services it
// updated, which Swarm then rolls out: a network change starts new tasks.
func (d *Driver) SetLinkAttachments(ctx context.Context, env EnvRef, want []LinkAttachment, linkIDs map[string]bool) ([]string, error) {
	services, err := d.engine.ServiceList(ctx, swarm.ServiceListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelEnv+"="+env.ID))})
	if err != nil {
		return nil, engineErr("list services", err)
	}
	var updated []string
	for _, svc := range services {
		labels := svc.Spec.Labels
		if !ownedBy(labels, env.ID) || labels[LabelJob] != "" || labels[LabelService] == "" {
			continue
		}
		var nets []swarm.NetworkAttachmentConfig
		for _, n := range svc.Spec.TaskTemplate.Networks {
			if !linkIDs[n.Target] {
				nets = append(nets, n)
			}
		}
		nets = append(nets, linkAttachmentsFor(want, labels[LabelService], false)...)
		if slices.Equal(networks(nets, nil), networks(svc.Spec.TaskTemplate.Networks, nil)) {
			continue
		}
		spec := svc.Spec
		spec.TaskTemplate.Networks = nets
		if _, err := d.engine.ServiceUpdate(ctx, svc.ID, svc.Version, spec, swarm.ServiceUpdateOptions{}); err != nil {
			return updated, engineErr("update networks of service "+svc.Spec.Name, err)
		}
		d.log.InfoContext(ctx, "service links updated", "service", svc.Spec.Name)
		updated = append(updated, svc.Spec.Name)
	}
	return updated, nil
}
