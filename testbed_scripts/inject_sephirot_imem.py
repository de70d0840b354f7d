#!/usr/bin/env python3
"""inject_sephirot_imem.py PROG.rom [-i IFACE | --board BOARD] [--no-verify] [--no-hold] [--original].

Writes every row with its commit, verifies by reading back, atomically (the input is held at a packet boundary).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _wrap import run  # noqa: E402

sys.exit(run(["inject"], sys.argv[1:]))
