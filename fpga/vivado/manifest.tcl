# manifest.tcl: the RTL files of sephirot/sephirot.core (FuseSoC CAPI2), read without FuseSoC (plain Tcl 8.5).

# The files (.v and .vh) listed under the given filesets of the core file, in its order, as absolute paths.
# The manifest is the one list of the RTL's files (docs/architecture.md); this keeps Vivado reading the same.
proc hxdp_manifest_files {core_file filesets} {
    set dir [file dirname [file normalize $core_file]]
    set fh [open $core_file r]
    set lines [split [read $fh] "\n"]
    close $fh
    set section ""
    set current ""
    set out {}
    foreach line $lines {
        if {[regexp {^(\w+):} $line -> top]} {
            set section $top
            set current ""
            continue
        }
        if {$section ne "filesets"} {
            continue
        }
        if {[regexp {^  (\w+):\s*$} $line -> name]} {
            set current $name
            continue
        }
        if {[lsearch -exact $filesets $current] >= 0 && [regexp {^\s+- ([^:\s]+\.vh?)\M} $line -> path]} {
            lappend out [file join $dir $path]
        }
    }
    return $out
}
