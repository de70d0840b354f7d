"""hXDP toolchain: compile XDP eBPF objects to Sephirot VLIW ROMs, run them, operate and measure them."""

__version__ = "0.1.0"
