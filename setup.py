"""Packaging hook: a wheel carries the RTL, its harnesses and the bundled programs as hxdp/_data (hxdp.paths)."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# what an installed hxdp needs from the checkout: the Verilator builds (RTL, harness, manifest, waivers), the
# bundled programs and their traffic (the PGO training runs, `hxdp experiment`), the ROMs
DATA = {
    "sephirot": ("sephirot.core", "lint.vlt", "rtl/*.v", "rtl/*.vh", "harness/*.cpp", "harness/*.h",
                 "harness/board/*.cpp", "harness/board/*.h"),
    "xdp_progs": ("Makefile", "*.c", "*.h", "fib/*.c", "fib/*.h", "gen_traffic.py", "traffic/*.pcap", "maps/*.json",
                  "expect/*.json"),
    "roms": ("*.rom", "*.json"),
}


class BuildWithData(build_py):
    """build_py that also copies DATA under hxdp/_data (an editable install uses the checkout itself)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        dest = Path(self.build_lib) / "hxdp" / "_data"
        for folder, patterns in DATA.items():
            for pattern in patterns:
                for src in sorted((ROOT / folder).glob(pattern)):
                    out = dest / folder / src.relative_to(ROOT / folder)
                    out.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src, out)


setup(cmdclass={"build_py": BuildWithData})
