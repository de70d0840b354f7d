"""A fuzz campaign: random programs x packets on every engine against the kernel, a summary and reproducers."""

from __future__ import annotations

import json
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from hxdp import fuzz
from hxdp.errors import HxdpError


def _batch_job(seed: int, indices: list[int], npackets: int, engines: tuple[str, ...],
               workdir: str, exclude: frozenset[str]) -> list[fuzz.CaseResult]:
    return fuzz.run_batch(seed, indices, npackets, engines, Path(workdir), exclude=exclude)


def signature(engine: str, div: tuple[int, str, list[str]]) -> str:
    """A coarse class of a divergence (engine, field, fault or first detail word) to pick distinct ones."""
    _, what, detail = div
    head = detail[0] if detail else ""
    if "fault" in " ".join(detail):
        head = next(d for d in detail if "fault" in d)
    elif what in ("bytes", "map"):
        head = head.split(":")[0]
    return f"{engine}/{what}/{head}"


def run_campaign(count: int, npackets: int, seed: int, engines: tuple[str, ...], jobs: int = 1,
                 out: str | Path = "hxdp-fuzz-out", batch: int = 25, start: int = 0, minimise: int = 3,
                 minimise_seconds: float = 180.0, progress: bool = True,
                 exclude: frozenset[str] = frozenset(), checkpoint: int = 250) -> dict[str, Any]:
    """Run programs start..start+count-1 of campaign `seed`; write reproducers; return the summary dict."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    work = fuzz.tmpdir()
    t0 = time.monotonic()
    indices = list(range(start, start + count))
    chunks = [indices[i:i + batch] for i in range(0, len(indices), batch)]
    results: list[fuzz.CaseResult] = []
    bar: Any = None
    if progress:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        bar = Progress(TextColumn("fuzz seed " + str(seed)), BarColumn(), MofNCompleteColumn(),
                       TextColumn("{task.fields[status]}"), TimeRemainingColumn(), transient=False,
                       console=Console(stderr=True))
    try:
        task = None
        if bar is not None:
            bar.start()
            task = bar.add_task("fuzz", total=count, status="")

        def advance(rs: list[fuzz.CaseResult]) -> None:
            before = len(results)
            results.extend(rs)
            if len(results) // checkpoint != before // checkpoint:  # partial numbers for long campaigns
                part = summarise(sorted(results, key=lambda r: r.index), seed, npackets, engines,
                                 time.monotonic() - t0, start)
                (out / "progress.json").write_text(json.dumps(part, indent=1) + "\n")
            if bar is not None:
                nd = sum(1 for r in results if r.status == "divergent")
                nr = sum(1 for r in results if r.status == "rejected")
                ne = sum(1 for r in results if r.status in ("engine-error", "clang"))
                bar.update(task, advance=len(rs), status=f"divergent {nd} rejected {nr} errors {ne}")

        if jobs <= 1:
            for ch in chunks:
                advance(fuzz.run_batch(seed, ch, npackets, engines, work, exclude=exclude))
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futs = [pool.submit(_batch_job, seed, ch, npackets, engines, str(work), exclude) for ch in chunks]
                for f in as_completed(futs):
                    advance(f.result())
    finally:
        if bar is not None:
            bar.stop()
        fuzz.rmtree(work)
    elapsed = time.monotonic() - t0
    results.sort(key=lambda r: r.index)
    summary = summarise(results, seed, npackets, engines, elapsed, start)
    summary["exclude"] = sorted(exclude)
    summary["reproducers"] = write_reproducers(results, seed, npackets, out, minimise, minimise_seconds, exclude)
    summary["verdict"] = verdict(summary)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def summarise(results: list[fuzz.CaseResult], seed: int, npackets: int, engines: tuple[str, ...],
              elapsed: float, start: int) -> dict[str, Any]:
    counts: dict[str, int] = {}
    actions: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
        for a, n in r.actions.items():
            actions[str(a)] = actions.get(str(a), 0) + n
    generated = len(results)
    rejected = counts.get("rejected", 0)
    accepted = generated - rejected - counts.get("clang", 0)
    divs = []
    classes: dict[str, int] = {}
    for r in results:
        for eng, d in r.divergences.items():
            sig = signature(eng, d)
            classes[sig] = classes.get(sig, 0) + 1
            divs.append({"index": r.index, "prog": r.name, "engine": eng, "packet": d[0], "field": d[1],
                         "detail": d[2][:4], "class": sig})
    features: dict[str, int] = dict.fromkeys(fuzz.FEATURES, 0)
    pairs: set[tuple[str, str]] = set()
    for r in results:
        if r.status in ("rejected", "clang"):
            continue
        for f in r.features:
            features[f] = features.get(f, 0) + 1
        pairs |= {(a, b) for a in r.features for b in r.features if a < b}
    npairs = len(fuzz.FEATURES) * (len(fuzz.FEATURES) - 1) // 2
    errors = [{"index": r.index, "prog": r.name, "engine": eng, "error": e}
              for r in results for eng, e in r.errors.items()]
    errors += [{"index": r.index, "prog": r.name, "engine": "-", "error": r.detail}
               for r in results if r.status in ("clang", "engine-error") and not r.errors]
    return {
        "seed": seed, "start": start, "programs": generated, "packets_per_program": npackets,
        "engines": list(engines), "accepted": accepted, "verifier_rejected": rejected,
        "verifier_rejection_rate": round(rejected / generated, 4) if generated else 0.0,
        "clang_failures": counts.get("clang", 0), "status": counts,
        "packets_run": accepted * npackets, "kernel_actions": actions,
        "divergent_programs": counts.get("divergent", 0), "divergences": divs, "divergence_classes": classes,
        "engine_errors": errors, "rejections": [{"index": r.index, "why": r.detail} for r in results
                                                if r.status == "rejected"][:20],
        "seconds": round(elapsed, 1), "programs_per_second": round(generated / elapsed, 2) if elapsed else 0.0,
        "features_covered": features, "feature_pairs_covered": len(pairs), "feature_pairs": npairs,
    }


def write_reproducers(results: list[fuzz.CaseResult], seed: int, npackets: int, out: Path, minimise: int,
                      minimise_seconds: float, exclude: frozenset[str] = frozenset(),
                      max_reproducers: int = 50) -> list[dict[str, Any]]:
    """One folder per divergent (program, engine), at most `max_reproducers`: the full case; the first `minimise`
    distinct classes also get a minimised case in min/."""
    written: list[dict[str, Any]] = []
    seen: set[str] = set()
    for r in results:
        for eng, d in r.divergences.items():
            if len(written) >= max_reproducers:
                return written
            prog = fuzz.gen_program(seed, r.index, exclude=exclude)
            packets = fuzz.gen_packets(seed, r.index, npackets)
            cfg = fuzz.gen_config(seed, r.index, prog)
            folder = out / f"{r.name}_{eng}"
            note = f"{r.name} on {eng}: packet {d[0]}: {d[1]} differs\n" + "\n".join("  " + x for x in d[2][:8])
            entry: dict[str, Any] = {"prog": r.name, "engine": eng, "folder": str(folder), "class": signature(eng, d)}
            try:
                fuzz.write_case(folder, prog, packets, cfg, eng, note)
                sig = signature(eng, d)
                if minimise > 0 and sig not in seen:
                    seen.add(sig)
                    minimise -= 1
                    work = fuzz.tmpdir("hxdp-fuzz-min-")
                    try:
                        small, pk = fuzz.minimise(prog, packets, cfg, eng, work,
                                                  deadline=time.monotonic() + minimise_seconds)
                    finally:
                        fuzz.rmtree(work)
                    fuzz.write_case(folder / "min", small, pk, cfg, eng, f"minimised: {note}")
                    entry["minimised"] = str(folder / "min")
                    entry["min_statements"] = small.count()
                    entry["min_packets"] = len(pk)
            except HxdpError as exc:
                entry["error"] = str(exc)
            written.append(entry)
    return written


def verdict(s: dict[str, Any]) -> str:
    """The campaign in one line: PASS when no engine diverged, erred, and clang built every program."""
    bad = s["divergent_programs"] or s["engine_errors"] or s["clang_failures"]
    return (f"{'FAIL' if bad else 'PASS'}: {s['divergent_programs']} divergent, {len(s['engine_errors'])} engine "
            f"errors, {s['clang_failures']} clang failures in {s['accepted']} programs x "
            f"{s['packets_per_program']} packets on {', '.join(s['engines'])}")


def render_text(s: dict[str, Any]) -> str:
    feats = s.get("features_covered", {})
    lines = [
        verdict(s),
        f"fuzz seed {s['seed']}: {s['programs']} programs x {s['packets_per_program']} packets on "
        f"{', '.join(s['engines'])} in {s['seconds']} s ({s['programs_per_second']} programs/s)",
        f"  verifier rejected {s['verifier_rejected']} ({100 * s['verifier_rejection_rate']:.1f}%), "
        f"clang failures {s['clang_failures']}, accepted {s['accepted']}, packets {s['packets_run']}",
        f"  features left out: {', '.join(s['exclude']) or 'none'}",
        f"  kernel actions: {', '.join(f'{k}: {v}' for k, v in sorted(s['kernel_actions'].items()))}",
        f"  divergent programs: {s['divergent_programs']}, engine errors: {len(s['engine_errors'])}",
        "  programs per feature: " + ", ".join(f"{k} {v}" for k, v in sorted(feats.items())),
        f"  feature pairs covered: {s.get('feature_pairs_covered', 0)} of {s.get('feature_pairs', 0)}",
    ]
    for cls, n in sorted(s["divergence_classes"].items(), key=lambda kv: -kv[1]):
        lines.append(f"    {n:5d} x {cls}")
    for e in s["engine_errors"][:10]:
        lines.append(f"    error {e['prog']} on {e['engine']}: {e['error'][:200]}")
    for rep in s["reproducers"][:20]:
        extra = f" (minimised: {rep['minimised']})" if "minimised" in rep else ""
        lines.append(f"  reproducer {rep['folder']}{extra}")
    if len(s["reproducers"]) > 20:
        lines.append(f"  ... {len(s['reproducers']) - 20} more reproducers")
    return "\n".join(lines)
