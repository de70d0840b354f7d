#!/usr/bin/env python3
"""rfc2544.py --board sim:SOCKET --pcap TRACE | --moongen 'MoonGen moongen_4port.lua 0 1 2 3' --max-mpps R.

RFC 2544 zero-loss throughput: a binary search over the offered rate (hxdp/board/rfc2544.py). On the simulated
board (started with `hxdp board serve --step`) trials are exact; on the testbed MoonGen sends from four ports.
"""

import sys

try:
    from hxdp.board.rfc2544 import main
except ImportError:
    print("the hxdp package is not installed: run `pip install -e .` in the repository", file=sys.stderr)
    sys.exit(1)

sys.exit(main())
