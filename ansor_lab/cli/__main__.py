"""``python -m ansor_lab.cli``: the ``ansor-lab`` command."""

import sys

from . import main

sys.exit(main())
