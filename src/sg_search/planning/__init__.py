"""Geodesic distances, paths, path following and viewpoint selection on the occupancy map."""
