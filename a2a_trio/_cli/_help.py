"""How a command's ``--help`` names the values it takes: by what they mean, not their type.

typer 0.27 and later print a value's Python type where click printed a metavar (``--timeout
<float>``, ``--header <list[str]>``, ``{url}`` in the usage line), and its rich help shows one
even beside a flag (``--json <bool>``).  A command built with :class:`PlainHelp` is helped the
way click always did: the usage line and the arguments by their metavar (``URL TEXT``), each
option by its metavar (``--timeout SECONDS``), a flag by its name alone.  A parameter declared
without a metavar is named after itself (``--page-token PAGE_TOKEN``); a type never shows.
"""

from __future__ import annotations

from typing import Any

from typer import _click
from typer.core import TyperArgument, TyperCommand, TyperOption


class PlainHelp(TyperCommand):
    """A typer command whose help shows metavars, not types (use as ``@app.command(cls=...)``,
    with the app's ``rich_markup_mode=None``: typer's rich help asks each parameter its type)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.metavar is None and not getattr(param, "is_flag", False):
                param.metavar = (param.name or "value").upper()

    def collect_usage_pieces(self, ctx: _click.Context) -> list[str]:
        """``[OPTIONS] URL [TEXT]``: the arguments by their metavars, an optional one in
        brackets."""
        arguments = [p for p in self.get_params(ctx) if isinstance(p, TyperArgument)]
        return [
            self.options_metavar or "",
            *(str(p.metavar) if p.required else f"[{p.metavar}]" for p in arguments),
        ]

    def format_options(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        """The arguments by their metavars, then the options as click writes them (each with
        its metavar, a flag alone, then its default, range or variable in brackets)."""
        params = self.get_params(ctx)
        arguments = [
            (p.metavar or "", p.help or "") for p in params if isinstance(p, TyperArgument)
        ]
        options = [
            record
            for p in params
            if isinstance(p, TyperOption) and (record := p.get_help_record(ctx)) is not None
        ]
        if arguments:  # (click's write_dl refuses an empty list)
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        with formatter.section("Options"):
            formatter.write_dl(options)
