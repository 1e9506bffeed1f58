"""A benchmark driver for the pool test: runs ``run_pool`` over episodes that write their
worker's pid to a folder and then sleep (python pool_driver.py FOLDER)."""

from __future__ import annotations

import os
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from sg_search.bench import fanout


def sleeper(folder: Path, seed: int) -> dict[str, Any]:
    """Writes ``<pid>`` into ``folder`` and sleeps a minute."""
    (folder / str(os.getpid())).write_text(str(seed))
    time.sleep(60.0)
    return {"seed": seed}


if __name__ == "__main__":  # spawned workers import this script again as __mp_main__
    fanout.run_pool(partial(sleeper, Path(sys.argv[1])), range(2), 2, lambda *_: None)
