"""The hXDP paper's numbers (OSDI'20, Section 5 and Table 1) and the targets this project set against them."""

from __future__ import annotations

# Only numbers printed in the paper's text or its tables are here (/work/shared/reference/hxdp-osdi20.txt); the bar
# heights of its Figures 7-15 are not in the text and are not guessed.

PAPER_TABLE3 = {  # Section 5.2.2, Table 3: program -> (eBPF instructions, x86 IPC, hXDP static IPC)
    "xdp1": (61, 2.20, 1.70),
    "xdp2": (78, 2.19, 1.81),
    "xdp_adjust_tail": (117, 2.37, 2.72),
    "router_ipv4": (119, 2.38, 2.38),
    "rxq_info": (81, 2.81, 1.76),
    "tx_ip_tunnel": (283, 2.24, 2.83),
    "simple_firewall": (72, 2.16, 2.66),
    "Katran": (268, 2.32, 2.62),
}
PAPER_NAMES = {  # paper's program name -> the program of xdp_progs/ that plays its role
    "xdp1": "xdp1",
    "xdp2": "xdp2",
    "xdp_adjust_tail": "xdp_adjust_tail",
    "router_ipv4": "xdp_router_ipv4",
    "rxq_info": "xdp_rxq_info",
    "tx_ip_tunnel": "xdp_tx_iptunnel",
    "simple_firewall": "simple_firewall",
    "Katran": "l4_load_balancer",  # Katran-like, written in this project: not the same code
}
OURS_TO_PAPER = {v: k for k, v in PAPER_NAMES.items()}
PAPER_X86_GHZ = 3.7  # the x86 core of the paper's Mpps comparisons
PAPER_MPPS = {  # our program -> (hXDP Mpps, x86 core @3.7 GHz Mpps, where in the paper)
    "xdp_drop": (52.0, 38.0, "Sec. 5.2.2 Baseline, Fig. 13"),
    "xdp_tx": (22.5, 12.0, "Sec. 5.2.2 Baseline, Fig. 13"),
    "xdp_redirect": (15.0, 11.0, "Sec. 5.2.2 Baseline, Fig. 13"),
    # x86 figure derived from 'only 12% slower than ... x86 CPU core clocked at 3.7GHz': 6.53 / 0.88
    "simple_firewall": (6.53, 6.53 / 0.88, "Sec. 5.2.1, Fig. 10"),
}
PAPER_DERIVED = {  # our program -> how a paper figure of PAPER_MPPS that the paper does not print was derived
    "simple_firewall": "x86 = 6.53 / 0.88, hXDP being 'only 12% slower' than the x86 core",
}
PAPER_NOTES = {
    "xdp_drop_no_early_exit_mpps": (22.0, "Sec. 5.2.2: 'Disabling the optimization brings down ... to 22Mpps'"),
    "simple_firewall_hand_optimised_mpps": (7.1, "Sec. 6: 'hand-optimize the simple firewall ... 7.1Mpps'"),
    "fig7_adjust_tail_6B_ldst_pct": (18.0, "Sec. 5.1: 6B load/store '18% reduction' on xdp_adjust_tail"),
    "fig7_firewall_bounds_checks_pct": (19.0, "Sec. 5.1: bound checks 'account for 19%' of simple_firewall"),
    "fig7_exit_action_pct": ("5-10", "Sec. 5.1: parametrized exit 'reduces ... by up to 5-10%'"),
    "fig8_fourth_lane_pct": (5.0, "Sec. 5.1: 'Adding a fourth execution lane reduces ... by an additional 5%'"),
    "fig11_latency": ("about 10x lower than x86", "Sec. 5.2.1, Fig. 11 (no absolute numbers in the text)"),
    "fig14_map_access": ("constant for keys of 1-16 B", "Sec. 5.2.2, Fig. 14"),
}
PAPER_TABLE1 = {  # Section 4.3, Table 1: component -> (logic LUTs, registers FFs, BRAM)
    "PIQ": (215, 58, 6.5),
    "APS": (9_000, 10_000, 4),
    "Sephirot": (27_000, 4_000, None),
    "Instr mem": (None, None, 7.7),
    "Stack": (1_000, 136, 16),
    "HF subsystem": (339, 150, None),
    "Maps subsystem": (5_800, 2_500, 16),
    "Total": (42_000, 18_000, 50),
}
PAPER_WITH_REFERENCE_NIC = (80_000, 63_000, 214)  # Table 1, "w/ reference NIC": hXDP and the NetFPGA reference NIC
VIRTEX7_690T = (433_200, 866_400, 1_470)  # the NetFPGA-SUME's XC7VX690T: LUTs, flip-flops, BRAM36 (Xilinx DS180)
TARGET_CYCLES = {  # issue 9: cycles per 64-byte packet back to back (paper figure at 156.25 MHz)
    "xdp_drop": (3, "52 Mpps"),
    "xdp_tx": (7, "22.5 Mpps"),
    "xdp_redirect": (10, "15 Mpps"),
    "simple_firewall": (22, "7.1 Mpps, hand-optimised"),
}
# issue 26: one core at 4x10G line rate of 64-byte frames (on the wire: 8 bytes of preamble and 12 of gap more)
LINE_RATE_PORTS = 4
LINE_RATE_GBPS = 10
LINE_RATE_WIRE_BYTES = 64 + 8 + 12
LINE_RATE_MPPS = LINE_RATE_PORTS * LINE_RATE_GBPS * 1000 / (8 * LINE_RATE_WIRE_BYTES)  # 59.52
LINE_RATE_PROGRAMS = ("xdp_drop", "xdp_tx")  # on their main path, RTL back to back
TARGET_LUT = 42_000  # the paper's whole IP (Table 1); Sephirot alone was 27K
