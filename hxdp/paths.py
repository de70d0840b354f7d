"""Where the toolchain's files are: the RTL and its harness, the bundled programs and ROMs."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def _root() -> Path:
    """The checkout holding this package, or (an installed wheel) the package's data folder, a copy of it."""
    checkout = PACKAGE.parent
    if (checkout / "sephirot" / "rtl").is_dir():
        return checkout
    return PACKAGE / "_data"


ROOT = _root()
SEPHIROT = ROOT / "sephirot"
RTL_DIR = SEPHIROT / "rtl"
HARNESS_DIR = SEPHIROT / "harness"
PROGS_DIR = ROOT / "xdp_progs"
ROMS_DIR = ROOT / "roms"
