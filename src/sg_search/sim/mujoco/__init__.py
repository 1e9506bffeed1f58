"""The embedded MuJoCo world: MJCF from a laid-out bddl house, CPU rendering, agent skills.

MuJoCo picks its OpenGL backend when it is first imported; importing this package first
makes that Mesa EGL (CPU) unless ``MUJOCO_GL`` says otherwise (``osmesa`` needs libosmesa6).
"""

import os

os.environ.setdefault("MUJOCO_GL", "egl")
if os.environ["MUJOCO_GL"] == "osmesa":
    os.environ.setdefault("PYOPENGL_PLATFORM", "osmesa")
