"""One spelling per concept across commands: an option that means the same thing is named the same everywhere, and
a name means one thing. The click tree is read, so a new command cannot drift."""

import typer

from kafkabench.cli.app import app

ALIASES = {"--config": "--producer-config"}  # check's older spelling, kept and documented as the same option


def options() -> list[tuple[str, str, list[str]]]:
    """(command path, parameter name, long flags) of every option of every command."""
    found = []

    def walk(command, path: str) -> None:
        for param in command.params:
            if param.param_type_name == "option":
                found.append((path, param.name, [flag for flag in param.opts if flag.startswith("--")]))
        if hasattr(command, "list_commands"):  # the labs' commands are listed by the group, not kept in it
            context = type(command).context_class(command)
            for name in command.list_commands(context):
                walk(command.get_command(context, name), f"{path} {name}".strip())

    walk(typer.main.get_command(app), "")
    assert len({path for path, _, _ in found}) > 20, "the walk missed the commands"
    return found


def test_a_parameter_has_one_flag_everywhere_and_a_flag_one_parameter():
    flag_of, name_of = {}, {}
    for path, name, flags in options():
        primary = flags[0] if flags else None
        flag_of.setdefault(name, {}).setdefault(primary, []).append(path)
        for flag in flags:
            name_of.setdefault(flag, {}).setdefault(name, []).append(path)
    assert {name: spellings for name, spellings in flag_of.items() if len(spellings) > 1} == {}
    assert {flag: names for flag, names in name_of.items() if len(names) > 1} == {}


def test_check_takes_the_labs_settings_files_and_config_only_as_an_alias():
    by_command = {path: flags for path, _, flags in options()}
    assert {flag for path, _, flags in options() for flag in flags[1:] if flag in ALIASES} == {"--config"}
    check = [flags for path, _, flags in options() if path == "check"]
    assert ["--producer-config", "--config"] in check and ["--consumer-config"] in check
    assert all("--config" not in flags for path, _, flags in options() if path != "check"), by_command
