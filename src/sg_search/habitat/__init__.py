"""Habitat support without habitat-sim: frame and camera conventions, semantic ids, ObjectNav
episodes. The bridge node that imports habitat_sim builds on these (habitat-sim cannot be
installed on Python 3.11 / glibc 2.36, so everything here is plain numpy)."""
