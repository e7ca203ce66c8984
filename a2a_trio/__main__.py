"""``python -m a2a_trio``: the ``a2a-trio`` command."""

import sys

from ._cli import main

sys.exit(main())
