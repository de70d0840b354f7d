"""The vocabulary of the evaluation: a run's Context, a point's Record, a target's Check, an Experiment."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hxdp import params
from hxdp.errors import HxdpError

CLOCK_MHZ = params.CLOCK_MHZ  # 156.25 MHz, the NetFPGA-SUME clock of the paper
NS_PER_CYCLE = 1000.0 / CLOCK_MHZ  # 6.4 ns


class ExperimentError(HxdpError):
    """The evaluation harness was used wrongly (unknown experiment, unreadable checkpoint)."""


class NotAvailable(Exception):
    """A measurement whose piece (compiler, RTL, kernel, yosys) is missing: reported, never invented."""


@dataclass
class Context:
    """What measurements share in one run: the output folder, the mode and in-process caches."""

    out: Path
    quick: bool = False
    cache: dict[Any, Any] = field(default_factory=dict)
    log: Callable[[str], None] = lambda msg: None

    @property
    def n_packets(self) -> int:
        return 32 if self.quick else 512


Record = dict[str, Any]
Row = dict[str, Any]
Measure = Callable[[Context, str], Record]


@dataclass
class Check:
    """A target the evaluation must check: status is 'pass', 'fail' or 'n/a' (with the reason in detail)."""

    name: str
    status: str
    value: str
    limit: str
    detail: str = ""


@dataclass
class Experiment:
    """One figure/table: the points it needs, how it turns their records into files and checks, and how it draws
    its plot from the rows of its NAME.json (so that a plot can be drawn again without measuring)."""

    name: str
    title: str
    points: Callable[[Context], list[str]]
    report: Callable[[Context, Experiment, dict[str, Record]], list[Check]]
    quick_default: bool = True  # part of `--quick` with no names
    plot: Callable[[Path, Experiment, list[Row], list[str]], None] | None = None


def ok(records: dict[str, Record], key: str) -> Record | None:
    """The record of `key` when it was measured, None when it is missing, not available or an error."""
    r = records.get(key)
    return r if r is not None and r.get("status") == "ok" else None
