"""The command line: a thin typer layer over the library. One module per subcommand."""
