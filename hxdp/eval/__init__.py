"""The evaluation (`hxdp experiment`): the hXDP paper's figures and tables measured on this toolchain."""
