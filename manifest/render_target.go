package manifest

// Target is an environment or a preview a manifest renders for, as its
// system variables see it.
type Target struct {
	// Name is the environment's name; a preview's slug.
	Name string
	// Slug is env.slug; Name when empty.
	Slug    string
	Preview bool
	// AppName is app.name; metadata.name when empty.
	AppName string
	// Branch and Commit are the branch the target follows and the commit
	// it pins, when it has its own.
	Branch, Commit string
}

// DeploymentContext is how deployment deploymentID renders for t. A
// deployment that read its manifest from a repository renders the branch
// and commit it fetched; any other renders the target's own.
func DeploymentContext(t Target, deploymentID, fetchedBranch, fetchedCommit string) RenderContext {
	rc := t.context(deploymentID)
	if fetchedCommit != "" {
		rc.GitBranch, rc.GitSHA = fetchedBranch, fetchedCommit
	}
	return rc
}

// PlanContext is how a plan renders m for t before anything is fetched or
// deployed: deployment.id is PlanDeploymentID, and for a
// repository-backed manifest git.branch and git.sha are what a deployment
// would fetch (the target's branch and pinned commit, else the
// connection's), with PlanGitSHA for a commit not pinned.
func PlanContext(m *Manifest, t Target) RenderContext {
	rc := t.context(PlanDeploymentID)
	if ms := m.Spec.Manifest; ms != nil {
		if r := ms.Repository; r != nil {
			if rc.GitBranch == "" {
				rc.GitBranch = r.Branch
			}
			if t.Branch == "" && t.Commit == "" {
				rc.GitSHA = r.Commit
			}
		}
		if rc.GitSHA == "" {
			rc.GitSHA = PlanGitSHA
		}
	}
	return rc
}

func (t Target) context(deploymentID string) RenderContext {
	return RenderContext{
		Environment: t.Name, Slug: t.Slug, Preview: t.Preview, AppName: t.AppName,
		GitBranch: t.Branch, GitSHA: t.Commit, DeploymentID: deploymentID,
	}
}
