"""The options of `rasplay serve` and `rasplay worker`, generated from the settings' declarations
(server/settings.py): one flag per setting the command takes, its help saying the default and the
environment variable. A flag left out is not passed on, so the setting comes from its environment
variable, else its default (no default is repeated here)."""
from __future__ import annotations

import argparse
import sys
import typing
from typing import Literal

from pydantic import ValidationError


METAVARS = {"bytes": "SIZE", "s": "SECONDS", "URL": "URL", "path": "DIR", "origins": "ORIGIN",
            "addresses": "ADDRESSES", "folders": "DIR"}


def fields(command: str) -> dict:
    from ..server.settings import Settings

    return {name: field for name, field in Settings.model_fields.items()
            if command in field.json_schema_extra["commands"]}


def _choices(field):
    annotation = field.annotation
    if typing.get_origin(annotation) is Literal:
        return list(typing.get_args(annotation))
    return None


def _repeatable(field) -> bool:
    return typing.get_origin(field.annotation) is tuple


def add_settings_options(parser: argparse.ArgumentParser, command: str) -> None:
    """One option per setting that `command` takes (default: not given, so the environment or the default)."""
    from ..server.settings import flag_of, shown_default, variable

    for name, field in fields(command).items():
        extra = field.json_schema_extra
        help_text = f"{field.description} (default {shown_default(field)}; ${variable(name, field)})"
        kwargs = dict(dest=name, default=argparse.SUPPRESS, help=help_text.replace("%", "%%"))
        if field.annotation is bool:
            kwargs["action"] = "store_true"   # on when given (its variable: true/false, 1/0, yes/no, on/off)
        elif _repeatable(field):
            kwargs["action"] = "append"
        elif _choices(field):
            kwargs["choices"] = _choices(field)
        if extra["unit"] in METAVARS and field.annotation is not bool:
            kwargs["metavar"] = METAVARS[extra["unit"]]
        parser.add_argument(flag_of(name, field), **kwargs)


def settings_from(args: argparse.Namespace, command: str, **fixed):
    """The Settings of the flags given (then the environment, then the defaults); a value out of its
    bounds stops the command with one line per problem, naming the flag or the variable."""
    from ..server.settings import Settings, flag_of, variable

    given = {name: getattr(args, name) for name in fields(command) if hasattr(args, name)}
    try:
        return Settings(**given, **fixed)
    except ValidationError as e:
        for error in e.errors():
            name = str(error["loc"][0]) if error["loc"] else ""
            field = Settings.model_fields.get(name)
            where = (flag_of(name, field) if name in given else f"${variable(name, field)}") if field else name
            shown = "" if field is None or field.json_schema_extra["unit"] == "URL" else f" (got {error.get('input')!r})"
            print(f"rasplay: {where}: {error['msg']}{shown}", file=sys.stderr)   # never a URL: passwords
        raise SystemExit(2) from None


def as_environment(settings, command: str) -> dict[str, str]:
    """The settings `command` takes, as environment variables (what a supervisor hands its children,
    so that no URL or limit shows in `ps`)."""
    from ..server.settings import variable

    out = {}
    for name, field in fields(command).items():
        value = getattr(settings, name)
        if value is None or value == ():
            continue
        out[variable(name, field)] = ",".join(map(str, value)) if isinstance(value, tuple) else str(value)
    return out
