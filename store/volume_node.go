package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// VolumeNode is the Swarm node an environment volume lives on.
type VolumeNode struct {
	Volume   string
	NodeID   string
	NodeName string
}

// VolumeNodes returns the recorded node of each of the environment's
// volumes, by volume name.
func (s *Store) VolumeNodes(ctx context.Context, teamID, environmentID string) (map[string]VolumeNode, error) {
	rows, err := s.db.Query(ctx, `
		SELECT volume, node_id, node_name FROM volume_nodes
		WHERE team_id = $1 AND environment_id = $2`, teamID, environmentID)
	if err != nil {
		return nil, wrap("volume nodes", err)
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[VolumeNode])
	if err != nil {
		return nil, wrap("volume nodes", err)
	}
	out := make(map[string]VolumeNode, len(list))
	for _, v := range list {
		out[v.Volume] = v
	}
	return out, nil
}

// PinVolumeNode records the node of a volume about to be created. A volume
// already recorded keeps its node: the first record wins.
func (s *Store) PinVolumeNode(ctx context.Context, teamID, environmentID string, v VolumeNode) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO volume_nodes (team_id, environment_id, volume, node_id, node_name)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (team_id, environment_id, volume) DO NOTHING`,
		teamID, environmentID, v.Volume, v.NodeID, v.NodeName)
	return wrap("pin volume node", err)
}
