"""Reading users' eBPF objects: ELF sections, relocations and BTF into programs and map definitions."""
