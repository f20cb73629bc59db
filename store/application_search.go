package store

import "strings"

// likePattern makes s a LIKE/ILIKE pattern matching s anywhere, with its own
// %, _ and \ taken literally.
func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(s) + "%"
}

// deploymentCommitSQL is the commit the deployment aliased d read, an SQL
// expression: the commit it fetched from the repository, else its one-off
// ref's commit, else its local snapshot's; "" when it read none.
func deploymentCommitSQL(d string) string {
	return `coalesce(
		nullif((SELECT f.commit FROM deployment_fetches f WHERE f.team_id = ` + d + `.team_id AND f.deployment_id = ` + d + `.id), ''),
		nullif((SELECT r.commit FROM deployment_refs r WHERE r.team_id = ` + d + `.team_id AND r.deployment_id = ` + d + `.id), ''),
		nullif((SELECT n.commit FROM deployment_snapshots n WHERE n.team_id = ` + d + `.team_id AND n.deployment_id = ` + d + `.id), ''),
		'')`
}
