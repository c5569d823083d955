"""The package's layers stay layers: no module imports, through any chain, one that imports it back. Lazy imports
inside functions and TYPE_CHECKING imports count too (a cycle hidden in a function is still a cycle); the
registry's plug-ins, loaded by name, are not an import."""

import ast
from pathlib import Path

import kafkabench

SOURCE = Path(kafkabench.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in SOURCE.rglob("*.py"):
        parts = ("kafkabench", *path.relative_to(SOURCE).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `path` imports (`from a.b import c` is a.b.c when c is a module, else a.b)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                      for a in node.names}
        elif isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
    return {name for name in names if name in modules}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as the chain of modules, or None (depth-first, colouring modules being visited)."""
    visiting: list[str] = []
    done: set[str] = set()

    def visit(module: str) -> list[str] | None:
        if module in visiting:
            return visiting[visiting.index(module):] + [module]
        if module in done:
            return None
        visiting.append(module)
        for imported in sorted(graph[module]):
            found = visit(imported)
            if found:
                return found
        visiting.pop()
        done.add(module)
        return None

    return next((found for module in sorted(graph) if (found := visit(module))), None)


def test_no_module_imports_itself_back_through_a_chain():
    modules = _modules()
    graph = {name: _imports(path, modules) - {name} for name, path in modules.items()}
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
