import pytest
import typer

from kafkabench.cli import output


def test_an_error_line_prints_what_it_says_and_nothing_rich_makes_of_it(capsys):
    # a JVM option's text once came out as "-Xshare🔛": rich read ":on:" as an emoji code
    with pytest.raises(typer.Exit):
        output.abort("JVM option(s) -Xshare:on: the JVM refuses them; [bold] stays")
    assert "-Xshare:on: the JVM refuses them; [bold] stays" in capsys.readouterr().err
