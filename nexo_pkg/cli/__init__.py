"""The Typer command line. It parses options, calls the library and sets the exit code."""
