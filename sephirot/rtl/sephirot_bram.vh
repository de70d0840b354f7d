// sephirot_bram.vh: how a block-RAM bank's read register is simulated (sephirot_mapmem.v, sephirot_pktbuf.v).
`ifndef SEPH_BRAM_VH
`define SEPH_BRAM_VH
// A bank read is a register loaded at the falling edge (yosys maps the bank to block RAM with an inverted read
// clock). The fast simulation build (SEPH_COMB_READS, set by hxdp.rtl) reads the same word combinationally: read
// addresses are set up by the rising edge and banks are written only at rising edges, so the word is the one the
// falling edge would load, and the model evaluates the core's logic once a cycle instead of twice (about 12% of
// its speed). tests/test_rtl_structural.py runs the falling-edge build, the one yosys synthesises, against it.
// SEPH_BRAM_READ(q, en, word): q reads `word` in the cycles with `en` (block RAM's read enable: q keeps its
// value otherwise, and the simulation's q is 0 then, so a client uses q only in cycles it enables).
`ifdef SEPH_COMB_READS
`define SEPH_BRAM_READ(q, en, word) always @(*) q = (en) ? (word) : 64'd0;
`else
`define SEPH_BRAM_READ(q, en, word) always @(negedge clk_i) if (en) q <= (word);
`endif
`endif
