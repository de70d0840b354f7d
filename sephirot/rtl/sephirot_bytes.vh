// sephirot_bytes.vh: byte helpers of the byte-addressed memories, included inside the modules that use them.
function automatic [63:0] funnel8(input [63:0] lo, input [63:0] hi, input [2:0] s);   // bytes s.. of {hi, lo}
  reg [127:0] t;   // (one shifter: half the LUTs of two)
  t = {hi, lo} >> {s, 3'd0};
  funnel8 = t[63:0];
endfunction
function automatic [63:0] bytemask(input [7:0] m);   // each bit of m as a byte
  bytemask = {{8{m[7]}}, {8{m[6]}}, {8{m[5]}}, {8{m[4]}}, {8{m[3]}}, {8{m[2]}}, {8{m[1]}}, {8{m[0]}}};
endfunction
function automatic [7:0] sizemask(input [3:0] size);   // the first `size` bytes (1..8)
  sizemask = size[3] ? 8'hff : ~(8'hff << size[2:0]);
endfunction
