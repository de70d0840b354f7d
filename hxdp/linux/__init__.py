"""Linux as the oracle and the baseline: libbpf through ctypes, BPF_PROG_TEST_RUN, native XDP on veth."""
