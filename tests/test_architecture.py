"""The architecture of docs/ARCHITECTURE.md, checked on every run.

Read from the source with ``ast`` -- imports inside functions count (they only hide an
arrow), imports under ``if TYPE_CHECKING:`` do not (they never run):

* imports point down the layers (or stay inside their own unit);
* no circle of imports between modules;
* code outside ``sluice.objtypes`` imports the package, not its modules;
* no unit reaches into the private attributes (``_name``) of another unit's objects or
  modules: ``conn._store`` from ``aq/`` is out, ``self._store`` is fine.  What the
  packages need from a session is public, in ``conn.context`` (sluice/context.py).

Each failure names the file and line and the rule it breaks.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "sluice"

# The units of the code and their layers, lowest first (docs/ARCHITECTURE.md).  A module
# may import its own unit and every unit of a lower layer; units of one layer may not
# import each other.  A unit lists the top-level parts of ``sluice`` it is made of (a
# subpackage, or a module without ".py"); ``__init__`` is the package's own module.
UNITS: dict[str, tuple[int, frozenset[str]]] = {
    "base": (0, frozenset({"errors", "constants", "names", "model", "objtypes", "sqlfunctions",
                           "routines", "context", "charset", "numformat", "dsn", "version",
                           "jsonvalues"})),
    "store": (1, frozenset({"store"})),
    "security": (2, frozenset({"security"})),
    "rules": (2, frozenset({"rules"})),
    "aq": (3, frozenset({"aq"})),
    "streams": (4, frozenset({"streams"})),
    "plsql": (5, frozenset({"plsql"})),
    "pipeline": (5, frozenset({"pipeline"})),
    "session": (6, frozenset({"__init__", "connection", "cursor", "connect_params", "pool", "pool_settings",
                              "aio", "defaults", "fetchvars", "dmlreturning", "bindtypes", "lobs", "bindvars",
                              "driver_mode", "dataframes", "refcursors", "storedunits",
                              "storedpackages"})),
    # beside the session: reads a store through a connection it is given (never imports
    # one); the front doors (idap, cli) show what it reads
    "monitor": (6, frozenset({"monitor"})),
    "idap": (7, frozenset({"idap"})),
    "dashboard": (8, frozenset({"dashboard"})),
    "cli": (9, frozenset({"cli", "demo", "__main__"})),
}
# Packages whose modules the rest of the code must not import one by one.
ONE_FACE = ("sluice.objtypes",)
# Private attributes a unit may use of another part's objects, with the reason.
FRIENDS: dict[tuple[str, str], str] = {
    ("aq", "model"): "python-oracledb's MessageProperties, EnqOptions and DeqOptions keep their "
                     "values in slots; their read-only attributes (msgid, enqtime, attempts, "
                     "state ...) have no setter, the AQ layer alone fills them, and it reads the "
                     "slots without property calls on the hot path",
}
# Receivers known by name, and the part whose objects they hold.
KNOWN_RECEIVERS = {"conn": "connection", "_conn": "connection", "connection": "connection",
                   "ctx": "context", "context": "context", "_session_ctx": "context"}


@dataclass(frozen=True)
class Module:
    name: str              # sluice.rules.lang.parser
    path: Path
    is_package: bool

    @property
    def part(self) -> str:
        """The top-level part of sluice this module belongs to (``rules``, ``connection``)."""
        parts = self.name.split(".")
        return parts[1] if len(parts) > 1 else "__init__"

    @property
    def where(self) -> str:
        return str(self.path.relative_to(SRC.parent))


@dataclass(frozen=True)
class Import:
    source: Module
    target: str            # the sluice module imported
    line: int
    text: str


@cache
def modules() -> dict[str, Module]:
    found = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = Module(".".join(parts), path, is_package)
    return found


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the nodes inside ``if TYPE_CHECKING:`` bodies."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING",
                                                                   "typing.TYPE_CHECKING"):
            for stmt in node.body:
                skip.update(id(n) for n in ast.walk(stmt))
    return skip


def _nearest_module(name: str) -> str | None:
    mods = modules()
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


@cache
def imports() -> tuple[Import, ...]:
    """Every run-time import of a sluice module by a sluice module."""
    found = []
    mods = modules()
    for mod in mods.values():
        tree = ast.parse(mod.path.read_text(), str(mod.path))
        skip = _type_checking_only(tree)
        package = mod.name if mod.is_package else mod.name.rpartition(".")[0]
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                targets = [f"{origin}.{a.name}" if f"{origin}.{a.name}" in mods else origin
                           for a in node.names]
            for target in targets:
                if target.split(".")[0] != PACKAGE:
                    continue
                resolved = _nearest_module(target)
                if resolved is not None and resolved != mod.name:
                    found.append(Import(mod, resolved, node.lineno, ast.unparse(node)))
    return tuple(found)


def unit_of(part: str) -> str | None:
    return next((unit for unit, (_, parts) in UNITS.items() if part in parts), None)


def test_every_part_of_sluice_has_a_layer():
    unplaced = sorted({f"{m.where}: sluice part {m.part!r} is in no unit of UNITS"
                       for m in modules().values() if unit_of(m.part) is None})
    if unplaced:
        pytest.fail("place each part of sluice in a layer (tests/test_architecture.py "
                    "UNITS, docs/ARCHITECTURE.md):\n" + "\n".join(unplaced), pytrace=False)


def test_imports_point_down_the_layers():
    broken = []
    mods = modules()
    for imp in imports():
        source, target = imp.source, mods[imp.target]
        su, tu = unit_of(source.part), unit_of(target.part)
        if su is None or tu is None or su == tu:
            continue
        (s_layer, _), (t_layer, _) = UNITS[su], UNITS[tu]
        if t_layer > s_layer:
            rule = "an arrow pointing up"
        elif t_layer == s_layer:
            rule = "a sideways arrow between units of one layer"
        else:
            continue
        broken.append(f"{source.where}:{imp.line}: `{imp.text}` makes {source.name} ({su}, layer "
                      f"{s_layer}) import {target.name} ({tu}, layer {t_layer}): {rule}")
    if broken:
        pytest.fail("imports must point down: front doors -> streams -> aq / rules / security "
                    "-> store -> base (docs/ARCHITECTURE.md). Pass a callback in, or move what "
                    "both sides need down.\n" + "\n".join(broken), pytrace=False)


def _cycle_in(component: set[str], graph: dict[str, dict[str, Import]]) -> list[Import]:
    """One circle through the strongly connected ``component``, as its imports."""
    start = min(component)
    path, seen = [start], {start}
    while True:   # walk inside the component until a module repeats
        nxt = min(t for t in graph[path[-1]] if t in component)
        if nxt in seen:
            loop = path[path.index(nxt):] + [nxt]
            return [graph[a][b] for a, b in zip(loop, loop[1:])]
        path.append(nxt)
        seen.add(nxt)


def test_no_import_circles():
    graph: dict[str, dict[str, Import]] = {name: {} for name in modules()}
    for imp in imports():
        graph[imp.source.name].setdefault(imp.target, imp)
    # Tarjan's strongly connected components, iteratively
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)
    circles = []
    for component in components:
        edges = _cycle_in(component, graph)
        circles.append(" -> ".join(e.source.name for e in edges) + f" -> {edges[0].source.name}\n"
                       + "\n".join(f"    {e.source.where}:{e.line}: `{e.text}`" for e in edges))
    if circles:
        pytest.fail("modules import each other in a circle (a function-level import only "
                    "hides it): keep what both need on one side, or pass a callback in.\n"
                    + "\n".join(circles), pytrace=False)


def test_one_public_face():
    broken = []
    for imp in imports():
        for face in ONE_FACE:
            if imp.target.startswith(face + ".") and not (imp.source.name == face
                                                         or imp.source.name.startswith(face + ".")):
                broken.append(f"{imp.source.where}:{imp.line}: `{imp.text}` reaches into {imp.target}:"
                              f" import from {face} itself")
    if broken:
        pytest.fail("\n".join(broken), pytrace=False)


@cache
def _private_names() -> dict[str, set[str]]:
    """part -> the private names its modules define: ``self._x = ...``, class attributes,
    slots and methods, module-level functions, classes and variables."""
    names: dict[str, set[str]] = {}
    for mod in modules().values():
        found = names.setdefault(mod.part, set())
        tree = ast.parse(mod.path.read_text(), str(mod.path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                    and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                found.add(node.attr)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                found.add(node.id)
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__"
                                                      for t in node.targets):
                try:
                    found.update(ast.literal_eval(node.value))
                except ValueError:
                    pass
    return {part: {n for n in found if _private(n)} for part, found in names.items()}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_aliases(mod: Module, tree: ast.AST) -> dict[str, str]:
    """Names bound to sluice modules by the imports of ``mod`` -> the module."""
    mods = modules()
    package = mod.name if mod.is_package else mod.name.rpartition(".")[0]
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
            origin = (".".join(base + ([node.module] if node.module else [])) if node.level
                      else node.module or "")
            for a in node.names:
                if f"{origin}.{a.name}" in mods:
                    aliases[a.asname or a.name] = f"{origin}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname and a.name in mods:
                    aliases[a.asname] = a.name
    return aliases


def test_no_reaching_into_private_attributes_of_other_parts():
    private = _private_names()
    mods = modules()
    broken = []
    for mod in mods.values():
        tree = ast.parse(mod.path.read_text(), str(mod.path))
        aliases = _module_aliases(mod, tree)
        unit = unit_of(mod.part)
        mine = set().union(*(private.get(p, set()) for p in UNITS[unit][1])) if unit else set()
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            receiver = node.value
            if isinstance(receiver, ast.Name) and receiver.id in ("self", "cls"):
                continue
            if isinstance(receiver, ast.Call) and ast.unparse(receiver.func) == "super":
                continue
            last = receiver.id if isinstance(receiver, ast.Name) else \
                receiver.attr if isinstance(receiver, ast.Attribute) else None
            if isinstance(receiver, ast.Name) and receiver.id in aliases:
                owners = {mods[aliases[receiver.id]].part}          # a module's private name
            elif last in KNOWN_RECEIVERS and (node.attr in private.get(KNOWN_RECEIVERS[last], ())
                                              or node.attr not in mine):
                owners = {KNOWN_RECEIVERS[last]}                     # conn._x, ctx._x
            else:
                owners = {part for part, names in private.items() if node.attr in names}
                if not owners or any(unit_of(o) == unit or (unit, o) in FRIENDS for o in owners):
                    continue                   # ours, not sluice's, or a friend's (several may own it)
            strangers = sorted(o for o in owners if unit_of(o) != unit and (unit, o) not in FRIENDS)
            if strangers:
                broken.append(f"{mod.where}:{node.lineno}: `{ast.unparse(node)}` reaches into a "
                              f"private attribute of {' / '.join('sluice.' + o for o in strangers)} "
                              f"from sluice.{mod.part} ({unit})")
    if broken:
        pytest.fail("private attributes stay inside their part of sluice: use the public face "
                    "(what the packages need from a session is conn.context, sluice/context.py), "
                    "or make what is needed public.\n" + "\n".join(broken), pytrace=False)


def test_the_checks_see_what_they_check():
    """The import graph is read from real code: a few arrows that must be there."""
    edges = {(i.source.name, i.target) for i in imports()}
    assert ("sluice.aq.conditions", "sluice.rules.compile.sql.compiler") in edges   # function-level
    assert ("sluice.connection", "sluice.aq.queue") in edges
    assert not any(s == "sluice.aq.queue" and t == "sluice.connection" for s, t in edges), \
        "TYPE_CHECKING imports must not count"
    assert {"_become", "_lock"} <= _private_names()["connection"]
    assert "_commit" in _private_names()["context"]
