"""A test double of the Toyota HSR (kinematics, joints, containers with handles)."""
