"""Occupancy mapping from posed depth and frontier extraction (``map`` frame, metres)."""
