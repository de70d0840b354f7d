"""The eBPF ISA and its extensions: the encoding table, instructions and their text, ROM files."""
