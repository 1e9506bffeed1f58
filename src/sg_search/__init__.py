"""sg_search: open-vocabulary object search with online 3D scene graphs.

The core library (every subpackage except :mod:`sg_search.ros`) imports no ROS.
Units are SI (metres, radians, seconds); positions are in the ``map`` frame
unless a docstring says otherwise.
"""

__version__ = "0.1.0"
