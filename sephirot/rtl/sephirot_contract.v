// sephirot_contract: the execution contract's row rules as simulation assertions (the test build, --assert).
`default_nettype none
`include "sephirot_params.vh"

// Rules of docs/execution_contract.md section 2 that the core relies on without checking them in hardware (the
// compiler's schedule verifier enforces them): a ROM that breaks one here is a compiler bug, not a packet fault.
// Instantiated by sephirot_core only when SEPH_ASSERT is defined (never in synthesis).
module sephirot_contract #(
  parameter integer LANES = `SEPH_LANES
) (
  input  wire                 clk_i,
  input  wire                 rst_ni,
  input  wire                 commit_i,   // the row takes effect at the end of this cycle
  input  wire                 call_i,     // the row calls a helper (which writes r0)
  input  wire [LANES-1:0]     wr_en_i,    // lane register writes
  input  wire [4*LANES-1:0]   wr_idx_i,
  input  wire [LANES-1:0]     st_i,       // lane stores (an atomic stores too)
  input  wire [LANES-1:0]     ld_i,       // lane loads
  input  wire [LANES-1:0]     atomic_i,
  input  wire [32*LANES-1:0]  addr_i,
  input  wire [4*LANES-1:0]   size_i
);
  function automatic overlap(input [31:0] a, input [3:0] sa, input [31:0] b, input [3:0] sb);
    overlap = (a < b + {28'd0, sb}) && (b < a + {28'd0, sa});
  endfunction

  integer i, j;
  always @(posedge clk_i) begin
    if (rst_ni && commit_i) begin
      for (i = 0; i < LANES; i = i + 1) begin
        // two lanes of a row never write the same register; a helper call writes r0
        assert (!(call_i && wr_en_i[i] && wr_idx_i[4*i +: 4] == 4'd0))
          else $error("contract: lane %0d writes r0 in a row calling a helper", i);
        // at most one atomic per row, and no other memory access beside it
        assert (!(atomic_i[i] && ((|(atomic_i & ~(1 << i))) || (|((st_i | ld_i) & ~(1 << i))))))
          else $error("contract: lane %0d's atomic shares its row with another memory access", i);
        for (j = i + 1; j < LANES; j = j + 1) begin
          assert (!(wr_en_i[i] && wr_en_i[j] && wr_idx_i[4*i +: 4] == wr_idx_i[4*j +: 4]))
            else $error("contract: lanes %0d and %0d both write r%0d", i, j, wr_idx_i[4*i +: 4]);
          // two stores of a row never write the same byte
          assert (!(st_i[i] && st_i[j] && overlap(addr_i[32*i +: 32], size_i[4*i +: 4], addr_i[32*j +: 32],
                                                  size_i[4*j +: 4])))
            else $error("contract: the stores of lanes %0d and %0d overlap (%08x, %08x)", i, j,
                        addr_i[32*i +: 32], addr_i[32*j +: 32]);
        end
      end
    end
  end
endmodule
