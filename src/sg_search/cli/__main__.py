"""``python -m sg_search.cli`` = ``sg-search``."""

import sys

from sg_search.cli import main

sys.exit(main())
