"""``python -m sg_search.cli`` = ``sg-search``."""

import sys

from sg_search.cli import main

if __name__ == "__main__":  # not again in a spawned worker process
    sys.exit(main())
