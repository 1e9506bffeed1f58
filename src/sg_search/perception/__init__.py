"""RGB-D perception and 3D instance fusion (detectors, back-projection, fusion).

Today: :mod:`sg_search.perception.replay`, which plays recorded fused instances.
"""
