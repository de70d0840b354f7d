"""testbed_scripts/program_fpga.sh: NetFPGA's order (unload the driver, program, remove the PCI device, rescan,
reload), shown by its dry run against a fake sysfs and a stand-in for Vivado."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "testbed_scripts" / "program_fpga.sh"


def fake_env(tmp_path: Path, pci_id: tuple[str, str] = ("0x10ee", "0x7028")) -> dict[str, str]:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "vivado").write_text("#!/bin/sh\nexit 0\n")
    (bindir / "vivado").chmod(0o755)
    dev = tmp_path / "sys" / "bus" / "pci" / "devices" / "0000:03:00.0"
    dev.mkdir(parents=True)
    (dev / "vendor").write_text(pci_id[0] + "\n")
    (dev / "device").write_text(pci_id[1] + "\n")
    other = dev.parent / "0000:00:1f.0"
    other.mkdir()
    (other / "vendor").write_text("0x8086\n")
    (other / "device").write_text("0xa2c8\n")
    return {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "SYSFS_ROOT": str(tmp_path / "sys"),
            "DRY_RUN": "1"}


def run(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    bit = tmp_path / "hxdp.bit"
    bit.write_bytes(b"bit")
    return subprocess.run(["bash", str(SCRIPT), str(bit), "nf0"], env=env, capture_output=True, text=True,
                          timeout=60)


def test_netfpga_order(tmp_path: Path) -> None:
    proc = run(tmp_path, fake_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    steps = [line[2:] for line in proc.stdout.splitlines() if line.startswith("+ ")]
    first = {k: next(i for i, s in enumerate(steps) if s.startswith(k)) for k in
             ("rmmod sume_riffa", f"{tmp_path}/bin/vivado", "echo 1 > ", "modprobe sume_riffa")}
    assert list(first) == sorted(first, key=first.__getitem__)  # unload, program, remove/rescan, reload
    remove = f"echo 1 > {tmp_path}/sys/bus/pci/devices/0000:03:00.0/remove"
    rescan = f"echo 1 > {tmp_path}/sys/bus/pci/rescan"
    assert steps.index(remove) < steps.index(rescan) < first["modprobe sume_riffa"]
    assert not any("0000:00:1f.0" in s for s in steps)  # only the board is removed
    assert steps[-1].endswith("rwaxi -i nf0 -a 0x8003000c")


def test_without_the_board_it_says_so(tmp_path: Path) -> None:
    proc = run(tmp_path, fake_env(tmp_path, ("0x10ee", "0x9999")))
    assert "no PCI device 10ee:7028 was present" in proc.stderr


def test_without_vivado_exit_2(tmp_path: Path) -> None:
    env = fake_env(tmp_path)
    (tmp_path / "bin" / "vivado").unlink()
    env["PATH"] = f"{tmp_path / 'bin'}:/usr/bin:/bin"
    proc = run(tmp_path, env)
    assert proc.returncode == 2 and "Vivado is not installed" in proc.stderr
