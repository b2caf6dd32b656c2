"""What reading Claude Code's own memory costs the packet build (it runs in the pipeline, never in the hook).

Builds a project on disk the size of a busy one — a CLAUDE.md importing ``--imports`` files (``@`` chains two deep,
``--lines`` lines each), ``.claude/rules/*.md``, a 200-line MEMORY.md — then times, best of ``--repeat``:

* ``read_native``: the CLAUDE.md chain with imports plus the loaded part of MEMORY.md, as the build reads it per
  project;
* ``format_packet`` with and without those statements over ``--memories`` memories (what leaving out the lines the
  files already say adds to one packet), and with the statements indexed once (:class:`AlreadySaid`, as the build
  does for all of a project's packets).

Prints each figure and saves them to ``benchmarks/results/native-memory-<time>.json``.

    python benchmarks/bench_native_memory.py [--imports 40] [--lines 30] [--memories 200] [--repeat 7]
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import tempfile
import time
from pathlib import Path

from results_file import save

WORDS = "build test lint deploy cache database migration staging release branch docker queue worker token".split()


def _line(i: int, j: int) -> str:
    words = [WORDS[(i * 7 + j * 3 + k) % len(WORDS)] for k in range(9)]
    return f"- Rule {i}.{j}: always {' '.join(words)} before step{i}x{j}."


def build_project(root: Path, imports: int, lines: int) -> tuple[Path, Path]:
    from nous_assets.capture.native_memory import slug

    project, config = root / "app", root / "cfg"
    (project / "docs").mkdir(parents=True)
    (project / ".claude" / "rules").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True, capture_output=True)
    top = ["# Project rules"] + [f"@docs/part{i}.md" for i in range(imports)]
    (project / "CLAUDE.md").write_text("\n".join(top) + "\n")
    for i in range(imports):
        body = [_line(i, j) for j in range(lines)] + [f"@sub{i}.md"]
        (project / "docs" / f"part{i}.md").write_text("\n".join(body) + "\n")
        (project / "docs" / f"sub{i}.md").write_text("\n".join(_line(i + 1000, j) for j in range(lines)) + "\n")
    for i in range(5):
        (project / ".claude" / "rules" / f"r{i}.md").write_text("\n".join(_line(i + 2000, j) for j in range(lines)))
    memory = config / "projects" / slug(str(project)) / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("\n".join(_line(3000, j) for j in range(200)) + "\n")
    return project, config


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--imports", type=int, default=40)
    parser.add_argument("--lines", type=int, default=30)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    from nous_assets.capture.native_memory import read_native
    from nous_assets.retrieve.packet import AlreadySaid, format_packet

    with tempfile.TemporaryDirectory() as tmp:
        project, config = build_project(Path(tmp), args.imports, args.lines)
        env = {"HOME": tmp}
        native = read_native(project, config_dir=config, env=env)
        statements = native.statements()
        read_s = best(lambda: read_native(project, config_dir=config, env=env), args.repeat)
        memories = {
            i: {"content": (_line(i % args.imports, i % args.lines)[2:] if i % 4 == 0 else
                            f"Memory {i}: the {WORDS[i % len(WORDS)]} step{i} needs flag{i} set"),
                "kind": "workflow", "scope": "project", "valid_from": "2026-01-01", "status": "stated"}
            for i in range(args.memories)
        }  # fmt: skip
        ids = list(memories)
        plain_s = best(lambda: format_packet(ids, memories, budget_chars=8000, known=len(ids)), args.repeat)
        packet = format_packet(ids, memories, budget_chars=8000, known=len(ids), native=statements)
        native_s = best(lambda: format_packet(ids, memories, budget_chars=8000, known=len(ids), native=statements),
                        args.repeat)  # fmt: skip
        index_s = best(lambda: AlreadySaid(statements), args.repeat)
        said = AlreadySaid(statements)  # as the build does: indexed once per project, for all of its packets
        indexed_s = best(lambda: format_packet(ids, memories, budget_chars=8000, known=len(ids), native=said),
                         args.repeat)  # fmt: skip
    figures = {
        "files_loaded": len(native.files),
        "bytes_loaded": sum(len(f.text.encode()) for f in native.files),
        "statements": len(statements),
        "read_native_ms": round(read_s * 1000, 2),
        "format_packet_ms": round(plain_s * 1000, 2),
        "format_packet_with_native_ms": round(native_s * 1000, 2),
        "index_statements_ms": round(index_s * 1000, 2),
        "format_packet_with_prebuilt_index_ms": round(indexed_s * 1000, 2),
        "memories": args.memories,
        "left_out_as_already_said": sum(1 for _, why in packet.left_out if why.startswith("already in")),
        "args": vars(args),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    for key, value in figures.items():
        if key != "args":
            print(f"{key}: {value}")
    save(figures, "native-memory")


if __name__ == "__main__":
    main()
