"""`python -m hxdp.cli`: the `hxdp` command."""

import sys

from hxdp.cli import main

sys.exit(main())
