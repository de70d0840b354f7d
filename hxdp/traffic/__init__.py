"""Packets: pcap files in and out, generated traffic of flows, sizes and protocols."""
