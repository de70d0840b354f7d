"""Differential fuzzing against the kernel: the program generator, its inputs, the checks, the campaign."""

from hxdp.fuzz.check import (
    CaseResult,
    Outcome,
    check_program,
    clang_flags,
    compile_c,
    engine_outcome,
    first_divergence,
    kernel_outcome,
    load_case,
    minimise,
    recorded_outcome,
    rmtree,
    run_batch,
    tmpdir,
    write_case,
    write_case_src,
)
from hxdp.fuzz.generator import (
    ENGINES,
    FEATURES,
    Block,
    FuzzError,
    FuzzProgram,
    Generator,
    Node,
    Simple,
    gen_program,
    parse_exclude,
    render_object,
)
from hxdp.fuzz.inputs import _csum16, gen_config, gen_packet, gen_packets

__all__ = ["CaseResult", "Outcome", "check_program", "clang_flags", "compile_c", "engine_outcome",
           "first_divergence", "kernel_outcome", "load_case", "minimise", "recorded_outcome", "rmtree", "run_batch",
           "tmpdir", "write_case", "write_case_src", "ENGINES", "FEATURES", "Block", "FuzzError", "FuzzProgram",
           "Generator", "Node", "Simple", "gen_program", "parse_exclude", "render_object", "_csum16", "gen_config",
           "gen_packet", "gen_packets"]
