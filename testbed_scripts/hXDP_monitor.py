#!/usr/bin/env python3
"""hXDP_monitor.py [-i IFACE | --board BOARD] [--interval S] [--count N] [--json] [--original].

Live received/TX/dropped/redirect rates (Mpps) and totals from the board counters (32-bit wrap handled).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _wrap import run  # noqa: E402

sys.exit(run(["monitor"], sys.argv[1:]))
