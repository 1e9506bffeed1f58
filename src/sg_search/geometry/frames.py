"""Frame names (REP 103/105), in one place: every configuration's default frame comes from here.

``map``: the fixed world frame of the graph, the occupancy map and all search positions;
``odom``: continuous odometry; ``base_link``: the robot base (the HSR's is ``base_footprint``,
set in config/hsr.yaml); ``camera_optical``: z forward, x right, y down.
"""

MAP = "map"
ODOM = "odom"
BASE_LINK = "base_link"
BASE_FOOTPRINT = "base_footprint"
CAMERA_OPTICAL = "camera_optical"
