"""ROS 2 adapters: thin nodes that host core objects and convert messages at the edge.

Importing this package needs rclpy and ``sg_search_interfaces``; the core does not.
"""
