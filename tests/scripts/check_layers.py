#!/usr/bin/python3
"""The structure of the code, measured from its own includes and calls (CTest solver_layers).

    /usr/bin/python3 tests/scripts/check_layers.py [--build DIR] [--report]

Reads the table of solver/README.md (folder, layer, external API) and checks:
1. every `#include "folder/x.h"` of a file in solver/ names a header of its own folder or of a
   folder of a lower layer;
2. with --build DIR (a configured and built tree): every symbol an object file of solver/ uses
   and another object file of solver/ defines (`nm`: U against T/D/R/B) lies in its own folder
   or a lower layer's;
3. no circle between files (a file = its .c and .h together), over includes and calls;
4. each external API (MPI, OpenCL, Zoltan, HDF5, jansson, libconfig) is included by the one
   file the table names, and SimGrid by no file of solver/;
5. no function of 100 lines or more (C: from the line of its opening brace to its closing
   one; Python: the ast's def to its last line) in solver/, sim/, tests/, validation/,
   workloads/, platforms/ and scenarios/;
6. nothing directly in solver/ but its README.md.
--report prints the layers, the files and their arrows. Exits 1 with every breach listed.
"""
import argparse
import ast
import collections
import glob
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOLVER = os.path.join(TOP, "solver")
MAX_LINES = 100
# the external APIs the table's last column names, and the headers that are them
API_HEADERS = {"MPI": r"mpi\.h", "OpenCL": r"CL/", "Zoltan": r"zoltan\.h", "HDF5": r"hdf5\.h",
               "jansson": r"jansson\.h", "libconfig": r"libconfig\.h"}
FORBIDDEN = r"(simgrid|smpi)/"  # solver/ never includes SimGrid (DESIGN.md)
# sim/'s SimGrid-free headers that a file of solver/ may include: the launcher (a plain program,
# not an MPI rank) has the simulator check a platform before it starts smpirun
SIM_HEADERS = {"platform_check.h": {"run/launcher.c"}}
SIM = os.path.join(TOP, "sim")


def read_layers(readme):
    """{folder: layer} and {api name: 'folder/file'} from solver/README.md's table."""
    layers, apis = {}, {}
    row = re.compile(r"^\| `(\w+)/` \| (\d+) \|.*\| *(.*?) *\|$")
    for line in open(readme, encoding="utf-8"):
        m = row.match(line.strip())
        if not m:
            continue
        folder, layer, api = m.group(1), int(m.group(2)), m.group(3)
        layers[folder] = layer
        for name, unit in re.findall(r"(\w+) \(`([\w.]+)`\)", api):
            apis[name] = f"{folder}/{unit}"
    return layers, apis


def module(rel):
    """solver-relative path -> file node: 'device/engine.c' and 'device/engine.h' are one."""
    return os.path.splitext(rel)[0]


def solver_files():
    out = []
    for path in sorted(glob.glob(os.path.join(SOLVER, "*", "*.[ch]"))):
        out.append(os.path.relpath(path, SOLVER))
    return out


def include_edges(files):
    edges, externals = [], collections.defaultdict(list)
    for rel in files:
        text = open(os.path.join(SOLVER, rel), encoding="utf-8").read()
        for target in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            if "/" not in target and os.path.exists(os.path.join(SIM, target)):
                if rel not in SIM_HEADERS.get(target, ()):
                    edges.append((module(rel), "sim/" + module(target), f"{rel} includes sim/{target}"))
                continue
            edges.append((module(rel), module(target), f"{rel} includes {target}"))
        for target in re.findall(r"^\s*#\s*include\s+<([^>]+)>", text, re.M):
            externals[target].append(rel)
    return edges, externals


def nm_symbols(obj):
    defined, used = set(), set()
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDRB":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
    return defined, used


def call_edges(build):
    """(caller, callee, why) from the object files of solver/ in a build tree."""
    objs = glob.glob(os.path.join(build, "CMakeFiles", "*", "solver", "*", "*.c.o"))
    if not objs:
        raise SystemExit(f"check_layers: no object files of solver/ under {build}/CMakeFiles: build it first")
    owner, uses = {}, collections.defaultdict(set)
    for obj in objs:
        rel = obj.split(os.sep + "solver" + os.sep, 1)[1][:-len(".o")]
        if not os.path.exists(os.path.join(SOLVER, rel)):
            continue  # left by a source that has moved since
        defined, used = nm_symbols(obj)
        for s in defined:
            owner.setdefault(s, module(rel))
        uses[module(rel)] |= used
    edges = []
    for mod, used in uses.items():
        for s in sorted(used):
            if s in owner and owner[s] != mod:
                edges.append((mod, owner[s], f"{mod}.c calls {s} ({owner[s]})"))
    return edges


def layer_breaches(edges, layers):
    bad = []
    for a, b, why in edges:
        fa, fb = a.split("/")[0], b.split("/")[0]
        if fa not in layers or fb not in layers:
            bad.append(f"{why}: a folder the table of solver/README.md does not list")
        elif fa != fb and layers[fb] >= layers[fa]:
            bad.append(f"{why}: {fa}/ (layer {layers[fa]}) may not use {fb}/ (layer {layers[fb]})")
    return bad


def circles(edges):
    """The strongly connected components of more than one file (Tarjan)."""
    graph = collections.defaultdict(set)
    for a, b, _ in edges:
        if a != b:
            graph[a].add(b)
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def api_breaches(externals, apis):
    bad = []
    for name, pattern in API_HEADERS.items():
        users = sorted({f for h, fs in externals.items() if re.match(pattern, h) for f in fs})
        want = apis.get(name)
        if want is None:
            bad.append(f"{name}: solver/README.md names no file for it")
        elif users != [want]:
            bad.append(f"{name}: included by {', '.join(users) or 'no file'}; expected {want} alone")
    for h, fs in externals.items():
        if re.match(FORBIDDEN, h):
            bad.append(f"{', '.join(fs)} include <{h}>: solver/ never includes SimGrid (sim/ does)")
    return bad


def strip_c(src):
    """C source without comments, strings and character constants (newlines kept)."""
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), src, flags=re.S)
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r'"(\\.|[^"\\\n])*"', '""', src)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", src)


def c_functions(path):
    """(name, first line, lines) of each function body at file scope."""
    src, out = strip_c(open(path, encoding="utf-8", errors="replace").read()), []
    depth, line, head, start = 0, 1, "", None
    for ch in src:
        if ch == "\n":
            line += 1
        if ch == "{":
            if depth == 0:
                h = head.strip()
                is_func = re.search(r"\)\s*$", h) and not re.search(r"=\s*$", h)
                names = re.findall(r"(\w+)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$", h) if is_func else []
                start = (line, names[-1] if names else "?") if is_func else None
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                if start:
                    out.append((start[1], start[0], line - start[0] + 1))
                head, start = "", None
                continue
        if depth == 0:
            head = "" if ch == ";" else head + ch
    return out


def py_functions(path):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    return [(n.name, n.lineno, n.end_lineno - n.lineno + 1) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def long_functions():
    bad = []
    for folder in ("solver", "sim", "tests", "validation", "workloads", "platforms", "scenarios", "kernels"):
        for path in sorted(glob.glob(os.path.join(TOP, folder, "**", "*"), recursive=True)):
            if path.endswith((".c", ".h", ".cpp", ".cl")):
                funcs = c_functions(path)
            elif path.endswith(".py"):
                funcs = py_functions(path)
            else:
                continue
            for name, first, n in funcs:
                if n >= MAX_LINES:
                    bad.append(f"{os.path.relpath(path, TOP)}:{first}: {name} is {n} lines (under {MAX_LINES})")
    return bad


def loose_files():
    return [f"solver/{f}: a file directly in solver/ (each belongs to a folder of the table)"
            for f in sorted(os.listdir(SOLVER)) if os.path.isfile(os.path.join(SOLVER, f)) and f != "README.md"]


def report(layers, files, edges):
    by_folder = collections.defaultdict(list)
    for f in files:
        by_folder[f.split("/")[0]].append(f)
    arrows = collections.Counter((a.split("/")[0], b.split("/")[0]) for a, b, _ in edges
                                 if a.split("/")[0] != b.split("/")[0])
    for folder, layer in sorted(layers.items(), key=lambda kv: (kv[1], kv[0])):
        uses = sorted({b for (a, b) in arrows if a == folder}, key=lambda f: layers.get(f, 99))
        print(f"layer {layer} {folder + '/':10s} {len(by_folder[folder]):2d} files; uses {', '.join(uses) or '-'}")
    print(f"{len(files)} files, {len(edges)} includes and calls between them, {sum(arrows.values())} between folders")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", help="a built tree: check the calls between solver/'s object files too")
    ap.add_argument("--report", action="store_true", help="print the layers and their arrows")
    args = ap.parse_args()
    layers, apis = read_layers(os.path.join(SOLVER, "README.md"))
    if not layers:
        print("check_layers: solver/README.md has no table of folders and layers")
        return 1
    files = solver_files()
    edges, externals = include_edges(files)
    if args.build:
        edges += call_edges(args.build)
    bad = layer_breaches(edges, layers)
    bad += [f"a circle: {' -> '.join(c)}" for c in circles(edges)]
    bad += api_breaches(externals, apis)
    bad += long_functions()
    bad += loose_files()
    if args.report:
        report(layers, files, edges)
    for b in bad:
        print("BREACH", b)
    print(f"check_layers: {len(bad)} breaches ({len(files)} files in {len(layers)} folders"
          f"{', calls read from ' + args.build if args.build else ', includes only'})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
