"""ament_python package sg_search (src layout). Install non-editable: `pip install .`
(an editable install skips data_files, so ament and config lookups would fail)."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "sg_search"

setup(
    name=PACKAGE,
    version="0.1.0",
    description="Open-vocabulary object search with online 3D scene graphs (ROS 2).",
    license="Apache-2.0",
    python_requires=">=3.10",
    package_dir={"": "src"},
    packages=find_packages("src", include=[PACKAGE, f"{PACKAGE}.*"]),
    package_data={
        f"{PACKAGE}.data": [
            "*.yaml",
            "*.jsonl",
            "knowledge/*.yaml",
            "knowledge/*.jsonl",
            "knowledge/*.npz",
            "knowledge/*.json",
        ],
        f"{PACKAGE}.llm": ["prompts/*.txt"],
    },
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.launch.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml") + glob("config/*.xml") + glob("config/*.rviz")),
        (f"share/{PACKAGE}/config/demo", glob("config/demo/*.yaml")),
    ],
    install_requires=["numpy", "pyyaml", "networkx"],
    zip_safe=False,
    entry_points={
        # Reasoners are plugins: a lab's package adds its own to this group (README, "Your reasoner").
        "sg_search.reasoners": [
            "scout = sg_search.reasoning.utility:create_scout",
            "scout-noroom = sg_search.reasoning.utility:create_scout_noroom",
            "scout-greedy = sg_search.reasoning.utility:create_scout_greedy",
            "exhaustive = sg_search.reasoning.utility:create_exhaustive",
            "sbert = sg_search.reasoning.utility:create_sbert",
            "sgnav = sg_search.reasoning.llm.sgnav:create_sgnav",
            "navgpt = sg_search.reasoning.llm.navgpt:create_navgpt",
            "sgrwr = sg_search.reasoning.llm.sgrwr:create_sgrwr",
            "msgnav = sg_search.reasoning.llm.msgnav:create_msgnav",
            "moma-llm = sg_search.reasoning.llm.room_rankers:create_moma_llm",
            "godhs = sg_search.reasoning.llm.room_rankers:create_godhs",
            "random = sg_search.reasoning.random_choice:create_random",
            "nearest = sg_search.reasoning.nearest_first:create_nearest",
        ],
        "console_scripts": [
            "sg-search = sg_search.cli:main",
            "scene_graph_server = sg_search.ros.runner:scene_graph_server_main",
            "reasoner = sg_search.ros.runner:reasoner_main",
            "affordance_executor = sg_search.ros.runner:affordance_executor_main",
            "recorder = sg_search.ros.runner:recorder_main",
            "live_view = sg_search.ros.runner:live_view_main",
            "observation_replay = sg_search.ros.runner:observation_replay_main",
            "frontier_planner = sg_search.ros.runner:frontier_planner_main",
            "sim_bridge = sg_search.ros.runner:sim_bridge_main",
            "perception = sg_search.ros.runner:perception_main",
            "hsr_driver = sg_search.ros.runner:hsr_driver_main",
            "fake_hsr = sg_search.ros.runner:fake_hsr_main",
            "habitat_bridge = sg_search.ros.runner:habitat_bridge_main",
        ],
    },
)
