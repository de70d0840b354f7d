"""The Python models of Sephirot: the sequential and VLIW engines, helpers, maps and packet memory."""
