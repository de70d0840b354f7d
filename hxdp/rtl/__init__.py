"""The Sephirot RTL under Verilator: its manifest, generated headers, build and packet-stream driver."""
