# The Habitat bridge in its own image: habitat-sim from conda (its only Linux build) with
# Python 3.10, plus the sg_search core and rclpy from the ROS 2 Kilted wheels (pip-only install).
# It talks to the stack (docker/Dockerfile) over DDS. Not built on the project's development
# machines (no Docker engine there); pins as tested by habitat-sim's own CI, see README.
#
#   docker build -f docker/habitat.Dockerfile -t sg_search_habitat .
FROM continuumio/miniconda3:24.7.1-0

SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ENV ROS_AUTOMATIC_DISCOVERY_RANGE=SUBNET
RUN apt-get update && apt-get install -y --no-install-recommends \
        build-essential cmake libegl1 libgl1 libgles2 \
    && rm -rf /var/lib/apt/lists/*
RUN conda create -y -n habitat python=3.10 \
    && conda install -y -n habitat -c aihabitat -c conda-forge habitat-sim=0.3.3 headless \
    && conda clean -afy

WORKDIR /opt/sg_search
COPY . .
# rclpy and the message packages from the pinned wheels, the interfaces built with CMake, then
# sg_search itself (its heavy optional dependencies are not needed by the bridge).
RUN conda run -n habitat pip install --no-cache-dir -r requirements/ros-wheels.txt \
        numpy pyyaml networkx scipy scikit-fmm bddl==3.6.0 \
    && conda run -n habitat python scripts/build_interfaces.py \
    && conda run -n habitat pip install --no-cache-dir --no-deps .

ENTRYPOINT ["conda", "run", "--no-capture-output", "-n", "habitat", "habitat_bridge", "--ros-args", \
            "--params-file", "/opt/sg_search/config/sg_search.yaml"]
