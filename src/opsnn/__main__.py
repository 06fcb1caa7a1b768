"""``python -m opsnn`` is the ``opsnn`` command."""

import sys

from .cli import main

sys.exit(main())
