"""MkDocs hook: the CLI reference page, generated from the command tree at build time.

`reference/cli.md` holds a title and one sentence; this hook appends one section per command of the
`kafkabench` Typer app (the root, every lab, `run`, `report`, `compare`, `cluster` and its subcommands,
...): its usage line, its help text, and a table of its options and one of its arguments. Everything is
read from the click objects that `--help` itself is rendered from (`typer.main.get_command(app)`), so the
page cannot drift from the CLI.
"""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path
from typing import Any, Iterator

PAGE = "reference/cli.md"
ROOT_NAME = "kafkabench"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    return markdown.rstrip("\n") + "\n\n" + render_reference() + "\n"


def _root_command() -> Any:
    with warnings.catch_warnings():  # the clients' own deprecation notices are not the docs' business
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            from kafkabench.cli.app import app
        except ImportError:  # not installed in this environment: use the source tree beside docs/
            sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
            from kafkabench.cli.app import app
    import typer.main

    return typer.main.get_command(app)


def _walk(command: Any, ctx: Any) -> Iterator[tuple[Any, Any]]:
    """Every visible command under `command`, depth first, in the order `--help` lists them."""
    yield command, ctx
    list_commands = getattr(command, "list_commands", None)
    if list_commands is None:
        return
    for name in list_commands(ctx):
        sub = command.get_command(ctx, name)
        if sub is None or getattr(sub, "hidden", False):
            continue
        # a context without parsing: no callbacks run, no-args-is-help never fires
        yield from _walk(sub, sub.context_class(sub, info_name=name, parent=ctx))


def render_reference() -> str:
    root = _root_command()
    ctx = root.context_class(root, info_name=ROOT_NAME)
    return "\n\n".join(_section(command, sub_ctx) for command, sub_ctx in _walk(root, ctx))


def _section(command: Any, ctx: Any) -> str:
    path = ctx.command_path
    parts = [f"## {path}", "```text\nUsage: " + " ".join([path, *command.collect_usage_pieces(ctx)]) + "\n```"]
    help_text = _help_text(command)
    if getattr(command, "deprecated", False):
        parts.append("**Deprecated.**")
    if help_text:
        parts.append(help_text)
    params = [p for p in command.get_params(ctx) if not getattr(p, "hidden", False)]
    arguments = [p for p in params if p.param_type_name == "argument"]
    options = [p for p in params if p.param_type_name == "option"]
    if arguments:
        rows = [
            [f"`{_argument_name(p)}`", _code(_type(p, ctx)), _default(p, ctx), _cell(_extras(p, _param_help(p)))]
            for p in arguments
        ]
        parts.append(_table(["argument", "type", "default", "help"], rows))
    if options:
        rows = [
            [_option_names(p), _code(_type(p, ctx)), _default(p, ctx), _cell(_extras(p, _param_help(p)))]
            for p in options
        ]
        parts.append(_table(["option", "type", "default", "help"], rows))
    subcommands = _subcommands(command, ctx)
    if subcommands:
        parts.append(_table(["command", "what it does"], subcommands))
    epilog = getattr(command, "epilog", None)
    if epilog:
        parts.append(_paragraphs(epilog))
    return "\n\n".join(parts)


def _help_text(command: Any) -> str:
    text = command.help or getattr(command, "short_help", None) or ""
    return _paragraphs(text.partition("\f")[0])  # click shows nothing after a form feed


def _paragraphs(text: str) -> str:
    """Help text as Markdown paragraphs: click's no-rewrap marker (a line holding \\b) dropped."""
    blocks = [block for block in re.split(r"\n\s*\n", text.strip()) if block.strip()]
    out = []
    for block in blocks:
        lines = [line for line in block.split("\n") if line.strip() != "\b"]
        out.append(_escape(" ".join(line.strip() for line in lines)))
    return "\n\n".join(out)


def _subcommands(command: Any, ctx: Any) -> list[list[str]]:
    list_commands = getattr(command, "list_commands", None)
    if list_commands is None:
        return []
    rows = []
    for name in list_commands(ctx):
        sub = command.get_command(ctx, name)
        if sub is None or getattr(sub, "hidden", False):
            continue
        anchor = _slug(f"{ctx.command_path} {name}")
        rows.append([f"[`{name}`](#{anchor})", _cell(sub.get_short_help_str(limit=200))])
    return rows


def _slug(heading: str) -> str:
    """The id Python-Markdown's toc extension gives a `## `heading`` section."""
    text = re.sub(r"[^\w\s-]", "", heading).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _option_names(param: Any) -> str:
    names = ", ".join(f"`{name}`" for name in param.opts)
    if param.secondary_opts:
        names += " / " + ", ".join(f"`{name}`" for name in param.secondary_opts)
    return names


def _argument_name(param: Any) -> str:
    display = getattr(param, "_rich_display_name", None)  # typer's name column: "name", "paths..."
    if display is not None:
        return display()
    return param.make_metavar()


def _type(param: Any, ctx: Any) -> str:
    """The type column as `--help` shows it: the metavar if one is set, else the type (`<int>`, `<path>`)."""
    if param.param_type_name == "option" and (getattr(param, "is_flag", False) or getattr(param, "count", False)):
        return "flag" if getattr(param, "is_flag", False) else "count"
    display = getattr(param, "display_type_rich", None)  # typer's own help column
    if display is not None:
        return display(ctx=ctx) or ""
    return param.make_metavar(ctx) if hasattr(param, "make_metavar") else ""


def _default(param: Any, ctx: Any) -> str:
    """The default as `--help` prints it after `default:`, or "required"; empty when it prints none."""
    if param.required:
        return "required"
    resilient = ctx.resilient_parsing
    ctx.resilient_parsing = True
    try:
        value = param.get_default(ctx, call=False)
    finally:
        ctx.resilient_parsing = resilient
    show_default = getattr(param, "show_default", None)
    if isinstance(show_default, str):
        return _cell(show_default)
    if value is None or not (show_default or ctx.show_default):
        return ""
    render = getattr(param, "_get_default_string", None)  # typer's formatter for the help's default
    if render is not None:
        text = render(ctx=ctx, show_default_is_str=False, default_value=value)
    elif callable(value):
        text = "(dynamic)"
    elif isinstance(value, (list, tuple)):
        text = ", ".join(str(item) for item in value)
    else:
        text = str(value)
    return _code(text) if text else ""


def _param_help(param: Any) -> str:
    return getattr(param, "help", None) or ""


def _extras(param: Any, text: str) -> str:
    """What `--help` adds after the text besides the default: the accepted range, the environment variable."""
    extra = []
    envvar = getattr(param, "envvar", None)
    if envvar and getattr(param, "show_envvar", False):
        extra.append("env var: " + (envvar if isinstance(envvar, str) else ", ".join(envvar)))
    range_text = getattr(param, "_get_number_range_help_str", lambda: None)()
    if range_text:
        extra.append(range_text)
    if extra:
        text = f"{text} [{'; '.join(extra)}]".strip()
    return text


def _code(text: str) -> str:
    if not text:
        return ""
    return "`" + text.replace("|", "&#124;") + "`" if "`" not in text else _cell(text)


def _cell(text: str) -> str:
    return _escape(" ".join(text.split())).replace("|", "\\|")


def _escape(text: str) -> str:
    """Markdown-safe prose: HTML-like `<name>` and emphasis characters escaped outside `code spans`."""
    pieces = re.split(r"(`[^`]*`)", text)
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            piece = piece.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            piece = re.sub(r"([*_\\\[\]])", r"\\\1", piece)
            pieces[i] = piece
    return "".join(pieces)


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell or " " for cell in row) + " |" for row in rows]
    return "\n".join(lines)
