"""Robot skills without ROS: opening motions, base and head geometry for manipulation."""
