"""The embedded simulator's scenes: houses from bddl's inventories, laid out procedurally.

Today: :mod:`bddl_scenes` (the 51 OmniGibson inventories, read from the installed
``bddl`` package) and :mod:`layout` (rooms, doors, furniture from a seed). The MuJoCo
world, agent and bridge build on these.
"""
