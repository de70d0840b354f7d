"""The board: AXI-Lite transports (NetFPGA driver, simulated board daemon) and the host tools on them."""
