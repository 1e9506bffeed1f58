"""The embedded MuJoCo world: MJCF from a laid-out bddl house, CPU rendering, agent skills."""
