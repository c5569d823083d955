"""The docs are tested: the site builds with every warning an error, every `kafkabench ...` command line shown in
the README or a docs page names a command and options that exist (checked against the click tree that `--help` is
rendered from), and every block of a program's output says which command printed it and on what machine."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from kafkabench.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
COMMAND = re.compile(r"^(?:\$ )?(?:\.venv/bin/)?(kafkabench\s.*)$")
FENCE = re.compile(r"^\s*```")
UNCHECKED = "<!-- commands of an example, not of kafkabench -->"  # on the line before a block's fence
OUTPUT = "```output"  # a block of what a program printed, as it printed it
CAPTION = re.compile(r"^Output of `(kafkabench [^`]+)` on (?P<machine>[^:]+):$")  # the line before every OUTPUT block


def command_lines(text: str) -> list[tuple[int, str]]:
    """(line number, command) of every kafkabench command inside a fenced block; continuations joined."""
    found, inside, skipped, pending, start, previous = [], False, False, "", 0, ""
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            inside, pending = not inside, ""
            skipped = inside and previous.strip() == UNCHECKED
            continue
        previous = line if line.strip() else previous
        if not inside or skipped:
            continue
        if pending:
            pending += " " + line.strip()
        else:
            match = COMMAND.match(line.strip())
            if not match:
                continue
            pending, start = match.group(1), number
        if pending.endswith("\\"):
            pending = pending[:-1]
            continue
        found.append((start, pending))
        pending = ""
    return found


def problems(text: str, where: str) -> list[str]:
    """Each command line naming a command or option the CLI does not have, as `where:line: ...`."""
    root = typer.main.get_command(app)
    out = []
    for number, line in command_lines(text):
        words = shlex.split(line, comments=True)[1:]
        command, ctx = root, root.context_class(root, info_name="kafkabench")
        while words and hasattr(command, "get_command") and not words[0].startswith("-"):
            sub = command.get_command(ctx, words[0])
            if sub is None:
                out.append(f"{where}:{number}: kafkabench has no command {' '.join([ctx.command_path, words[0]])!r}")
                break
            command, ctx = sub, sub.context_class(sub, info_name=words.pop(0), parent=ctx)
        else:
            names = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
            for word in words:
                option = word.split("=", 1)[0]
                if re.match(r"^-X.", option):  # -Xkey=value, the option and its value in one word
                    option = "-X"
                if option.startswith("-") and not re.match(r"^-\d", option) and option not in names | {"--help"}:
                    out.append(f"{where}:{number}: {ctx.command_path} has no option {option}")
    return out


def output_problems(text: str, where: str) -> list[str]:
    """Each output block without its caption ("Output of `kafkabench ...` on MACHINE:" on the line before, naming a
    command that exists), and each line of a console block with `$` prompts that is not a command: output goes in
    an output block, captioned."""
    out, lines, index = [], text.splitlines(), 0
    while index < len(lines):
        if not FENCE.match(lines[index]):
            index += 1
            continue
        end = next((i for i in range(index + 1, len(lines)) if FENCE.match(lines[i])), len(lines))
        fence, body = lines[index].strip(), lines[index + 1:end]
        previous = next((line.strip() for line in reversed(lines[:index]) if line.strip()), "")
        if fence == OUTPUT:
            caption = CAPTION.match(previous)
            if caption is None:
                out.append(f"{where}:{index + 1}: an output block needs `Output of `kafkabench ...` on MACHINE:` "
                           "on the line before it")
            else:
                out += [f"{where}:{index}: {said.split(': ', 1)[1]}"
                        for said in problems(f"```\n{caption.group(1)}\n```", where)]
        elif fence == "```console" and previous != UNCHECKED and any(line.startswith("$ ") for line in body):
            for offset, line in enumerate(body):
                continued = offset > 0 and body[offset - 1].rstrip().endswith("\\")
                if line.strip() and not line.startswith("$ ") and not continued:
                    out.append(f"{where}:{index + 2 + offset}: output in a console block; put it in a captioned "
                               "output block")
        index = end + 1
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_output_shown_names_its_command_and_machine(page):
    assert output_problems(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT))) == []


def test_an_output_without_its_caption_or_inside_a_console_block_fails():
    page = ("```console\n$ kafkabench cluster up\n127.0.0.1:9092\n```\n\n```output\nok\n```\n\n"
            "Output of `kafkabench check --nonesuch` on a laptop:\n```output\nok\n```\n\n"
            "Output of `kafkabench check` on the project's 2-core machine:\n```output\nok\n```\n")
    assert output_problems(page, "README.md") == [
        "README.md:3: output in a console block; put it in a captioned output block",
        "README.md:6: an output block needs `Output of `kafkabench ...` on MACHINE:` on the line before it",
        "README.md:10: kafkabench check has no option --nonesuch"]


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_command_line_shown_exists(page):
    assert problems(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT))) == []


def test_a_page_with_an_option_that_does_not_exist_fails_naming_the_file_and_line():
    page = "Run it:\n\n```console\n$ kafkabench latency --count 20\n$ kafkabench latency --colour red \\\n" \
           "      --count 5\n$ kafkabench nonesuch --x 1\n```\n\nkafkabench latency --outside-a-block\n"
    assert problems(page, "docs/x.md") == ["docs/x.md:5: kafkabench latency has no option --colour",
                                           "docs/x.md:7: kafkabench has no command 'kafkabench nonesuch'"]


def test_the_site_builds_with_every_warning_an_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    reference = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for command in ("kafkabench latency", "kafkabench tune", "kafkabench cluster up"):
        assert command in reference
