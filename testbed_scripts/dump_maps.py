#!/usr/bin/env python3
"""dump_maps.py --rom PROG.rom [-i IFACE | --board BOARD] [list | dump [NAME] | lookup .. | update .. | delete ..].

Without an operation, dumps every map of the program as bpftool-like JSON.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _wrap import run  # noqa: E402

OPS = {"list", "dump", "lookup", "update", "delete", "line"}
args = sys.argv[1:]
sys.exit(run(["maps"], args if OPS & set(args) else args + ["dump"]))
