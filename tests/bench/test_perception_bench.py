"""The perception benchmark measures the perception the stack runs."""

from __future__ import annotations

from sg_search.bench.embodied_world import StackConfig
from sg_search.bench.perception import NOISE, stack_instances
from sg_search.perception.ground_truth import GroundTruthDetector


def test_the_benchmark_fuses_with_the_stacks_parameters_and_erodes_the_known_bleed() -> None:
    """The stack erodes masks by the YAML's erode_px plus the detector's known bleed (a 2 px bleed
    eroded by 1 px left a rim of the neighbour at the object's depth); the benchmark's noisy
    instance map must do the same, or it scores a pipeline the robot does not run."""
    stack = StackConfig.load().perception
    clean = stack_instances(GroundTruthDetector())
    noisy = stack_instances(GroundTruthDetector(NOISE, seed=1))
    assert NOISE.dilate_px > 0
    assert clean.backprojection == stack.backprojection()
    assert noisy.backprojection.erode_px == stack.backprojection().erode_px + NOISE.dilate_px
    assert noisy.params == clean.params == stack.fusion()
