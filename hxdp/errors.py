"""Error types: every user-facing failure is an HxdpError with a one-line message naming what and where."""


class HxdpError(Exception):
    """A failure reported to the user as one line, with a non-zero exit."""


class ElfError(HxdpError):
    """A malformed, non-BPF or unsupported ELF object."""


class CompileError(HxdpError):
    """A program the target cannot run (names the instruction and the reason)."""


class PcapError(HxdpError):
    """A malformed or truncated pcap file."""


class KernelUnavailable(HxdpError):
    """The running kernel refuses bpf() (no permission or no support)."""
