"""``python -m holdoff`` runs the command line."""

import sys

from holdoff.cli import main

sys.exit(main())
