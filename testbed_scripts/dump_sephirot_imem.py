#!/usr/bin/env python3
"""dump_sephirot_imem.py [N] [-i IFACE | --board BOARD] [--layout PROG.maps.json] [-o OUT.rom].

Prints instruction memory rows as four lanes, hex and disassembled (default: the loaded program's rows).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _wrap import run  # noqa: E402

sys.exit(run(["dump-imem"], sys.argv[1:]))
