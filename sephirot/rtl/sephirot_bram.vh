// sephirot_bram.vh: how a block-RAM bank's read register is simulated (sephirot_mapmem.v, sephirot_pktbuf.v).
`ifndef SEPH_BRAM_VH
`define SEPH_BRAM_VH
// A bank read is a register loaded at the falling edge (yosys maps the bank to block RAM with an inverted read
// clock). The fast simulation build (SEPH_COMB_READS, set by hxdp.rtl) reads the same word combinationally: read
// addresses are set up by the rising edge and banks are written only at rising edges, so the word is the one the
// falling edge would load, and the model evaluates the core's logic once a cycle instead of twice (about 12% of
// its speed). tests/test_rtl_structural.py runs the falling-edge build, the one yosys synthesises, against it.
`ifdef SEPH_COMB_READS
`define SEPH_READ_EDGE *
`define SEPH_READ_ASSIGN =
`else
`define SEPH_READ_EDGE negedge clk_i
`define SEPH_READ_ASSIGN <=
`endif
`endif
