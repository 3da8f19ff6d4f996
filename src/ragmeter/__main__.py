"""``python -m ragmeter``: the ``ragmeter`` command, for environments where the console script is
not on ``PATH`` (a venv that is not activated, ``pipx run``, a notebook's ``!python -m``)."""

from .cli import main

if __name__ == "__main__":
    main(prog_name="ragmeter")
