"""Declaring an agent in Python: skills are async handler functions, the card is derived.

::

    agent = Agent("Recipe agent", "Finds recipes", version="1.2.0")

    @agent.skill(tags=["cooking"], examples=["a vegan curry"], default=True)
    async def find_recipe(ctx: TaskContext) -> str:
        '''Find a recipe for a dish.'''
        return f"Here is a recipe for {ctx.text}"
"""

from __future__ import annotations

import dis
import functools
import inspect
import itertools
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, overload

import attrs

from .. import model as m
from ..errors import AgentMisuseError, ContentTypeNotSupportedError, InvalidParamsError

if TYPE_CHECKING:
    from ._context import TaskContext

type Handler = Callable[[TaskContext], Awaitable[Any]]

SKILL_METADATA_KEY = "skillId"
"""``message.metadata.skillId`` picks a skill (the registry-adapter convention)."""


@attrs.frozen
class Skill:
    """One skill: its card entry and the handler that runs it.

    ``message_only`` skills answer with a single ``Message`` and create no task; their handler runs
    inside the request (nobody else can observe it).  ``resumable`` skills are re-run after a
    restart instead of being failed.
    """

    id: str
    name: str
    description: str
    handler: Handler
    tags: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    input_modes: tuple[str, ...] = ()
    output_modes: tuple[str, ...] = ()
    message_only: bool = False
    resumable: bool = False

    def card_entry(self) -> m.AgentSkill:
        return m.AgentSkill(
            id=self.id,
            name=self.name,
            description=self.description,
            tags=self.tags,
            examples=self.examples,
            input_modes=self.input_modes,
            output_modes=self.output_modes,
        )


def _calls(handler: Callable[..., object]) -> list[object]:
    """What calling ``handler`` runs, outermost first: through ``functools.partial``, bound
    methods, ``__wrapped__`` (``functools.wraps``) and an object's ``__call__``."""
    chain: list[object] = []
    target: object = handler
    while not any(target is seen for seen in chain) and len(chain) < 64:
        chain.append(target)
        if isinstance(target, functools.partial):
            target = target.func
        elif inspect.ismethod(target):
            target = target.__func__
        elif inspect.isfunction(target):
            if not hasattr(target, "__wrapped__"):
                break
            target = target.__wrapped__
        elif callable(target) and not isinstance(target, type) and not inspect.isbuiltin(target):
            target = type(target).__call__
        else:
            break
    return chain


def _calls_a_coroutine_function(function: Callable[..., object]) -> bool:
    """Whether a plain ``def`` names an ``async def`` it can call: a closure's or a global, or
    an attribute of one (``service.answer``, ``trio.sleep``; looked up without running any
    code): a decorator's wrapper without ``functools.wraps``, a lambda, a function handing on
    a method's coroutine, which return its coroutine."""
    try:
        names = inspect.getclosurevars(function)
    except (TypeError, ValueError):  # not Python code, or a closure cell still empty
        return False
    found = [*names.globals.values(), *names.nonlocals.values()]
    found += [
        inspect.getattr_static(holder, attribute, None)
        for holder in found
        for attribute in names.unbound
    ]
    return any(inspect.iscoroutinefunction(f) for f in found if callable(f))


_BUILT_HERE = frozenset(
    {
        "LOAD_CONST",
        "BUILD_STRING",
        "FORMAT_SIMPLE",
        "FORMAT_WITH_SPEC",
        "BUILD_LIST",
        "BUILD_TUPLE",
        "BUILD_MAP",
        "BUILD_CONST_KEY_MAP",
        "BUILD_SET",
    }
)
"""Instructions leaving a value that is never awaitable: a constant, a string, a display."""
_FILLED_HERE = frozenset({"LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE"})
"""With argument 1, these leave the list, set or dict they filled (``[1, 2]``, ``{**a}``)."""


def _returns_plain_values(function: Callable[..., object]) -> bool:
    """Whether every ``return`` of a plain ``def`` (its bytecode) gives a value made right
    there that is never awaitable: a constant (``None`` falling off the end too), a formatted
    string, a list, tuple, dict or set display.  A value from anywhere else (a name, a call,
    an expression that joins two branches) may be an awaitable: ``False``, as for a
    generator and for a function that never returns."""
    if inspect.isgeneratorfunction(function):
        return False
    returns = [
        (before, instruction)
        for before, instruction in itertools.pairwise([None, *dis.get_instructions(function)])
        if instruction is not None and instruction.opname in ("RETURN_VALUE", "RETURN_CONST")
    ]
    return bool(returns) and all(_plain_return(*pair) for pair in returns)


def _plain_return(before: dis.Instruction | None, instruction: dis.Instruction) -> bool:
    if instruction.opname == "RETURN_CONST":
        return True
    if before is None or instruction.is_jump_target:  # the value may come from a jump
        return False
    return before.opname in _BUILT_HERE or (before.opname in _FILLED_HERE and before.arg == 1)


def _unpartial(handler: Callable[..., object]) -> Callable[..., object]:
    """What a ``functools.partial`` (of a partial ...) calls; any other callable as it is."""
    while isinstance(handler, functools.partial):
        handler = handler.func
    return handler


def _handler_name(handler: Callable[..., object]) -> str:
    """The name a skill takes from its handler: a function's or method's, a partial's
    function's, an object's class's."""
    called = _unpartial(handler)
    name = getattr(called, "__name__", None)
    return name if isinstance(name, str) else type(called).__name__


def _check_handler(skill_id: str, handler: Callable[..., object]) -> None:
    """Refuse where the skill is declared a handler the runtime could not run, instead of
    failing every task it is given later: an async generator, a callable that returns no
    awaitable (a plain ``def``, a method or an object's ``__call__`` that is not
    ``async def``, unless it wraps or calls one and may return what that gives) or one that
    cannot be called with the task's context alone.  What a plain ``def`` returns is not
    always known here: the runtime says so when one gave nothing to await."""
    how = f"declare it as `async def {_handler_name(handler)}(ctx: TaskContext)`"
    chain = _calls(handler)
    if any(inspect.isasyncgenfunction(f) for f in chain):
        raise AgentMisuseError(
            f"skill {skill_id!r} yields: a skill returns its answer; to stream it in pieces,"
            " `await ctx.emit_artifact(chunk, ...)` each one instead of yielding it"
        )
    last = chain[-1]
    if not any(inspect.iscoroutinefunction(f) for f in chain) and not (
        inspect.isfunction(last)
        and _calls_a_coroutine_function(last)
        and not _returns_plain_values(last)
    ):
        called = _unpartial(handler)
        if isinstance(called, type) or inspect.isroutine(called):
            raise AgentMisuseError(f"skill {skill_id!r} is a plain function: {how}")
        raise AgentMisuseError(
            f"skill {skill_id!r} is an object whose __call__ is a plain function: declare it"
            " as `async def __call__(self, ctx: TaskContext)`"
        )
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):  # no signature to read (some builtins): the call will tell
        return
    try:
        signature.bind(object())
    except TypeError:
        empty = inspect.Parameter.empty
        bare = signature.replace(
            parameters=[p.replace(annotation=empty) for p in signature.parameters.values()],
            return_annotation=empty,
        )
        raise AgentMisuseError(
            f"skill {skill_id!r} cannot take the task's context as its one argument"
            f" (it takes {bare}): {how}"
        ) from None


class Agent:
    """An A2A agent: identity, skills, and the defaults its card advertises."""

    def __init__(
        self,
        name: str,
        description: str = "",
        *,
        version: str = "1.0.0",
        provider: m.AgentProvider | None = None,
        documentation_url: str | None = None,
        icon_url: str | None = None,
        default_input_modes: Iterable[str] = ("text/plain", "application/json"),
        default_output_modes: Iterable[str] = ("text/plain", "application/json"),
    ) -> None:
        self.name = name
        self.description = description or name
        self.version = version
        self.provider = provider
        self.documentation_url = documentation_url
        self.icon_url = icon_url
        self.default_input_modes = tuple(default_input_modes)
        self.default_output_modes = tuple(default_output_modes)
        self._skills: dict[str, Skill] = {}
        self._default: str | None = None

    @property
    def skills(self) -> tuple[Skill, ...]:
        return tuple(self._skills.values())

    @property
    def default_skill(self) -> Skill | None:
        """The skill for messages that name none: the one marked default, else the first."""
        if self._default is not None:
            return self._skills[self._default]
        return next(iter(self._skills.values()), None)

    def add_skill(self, skill: Skill, *, default: bool = False) -> Skill:
        """Register ``skill``; ids are unique within an agent."""
        if skill.id in self._skills:
            raise AgentMisuseError(f"skill id {skill.id!r} is declared twice")
        self._skills[skill.id] = skill
        if default:
            if self._default is not None:
                raise AgentMisuseError(f"two default skills: {self._default!r} and {skill.id!r}")
            self._default = skill.id
        return skill

    @overload
    def skill(self, id: Handler, /) -> Handler: ...

    @overload
    def skill(
        self,
        id: str | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        tags: Iterable[str] = (),
        examples: Iterable[str] = (),
        input_modes: Iterable[str] = (),
        output_modes: Iterable[str] = (),
        default: bool = False,
        message_only: bool = False,
        resumable: bool = False,
    ) -> Callable[[Handler], Handler]: ...

    def skill(
        self,
        id: str | Handler | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        tags: Iterable[str] = (),
        examples: Iterable[str] = (),
        input_modes: Iterable[str] = (),
        output_modes: Iterable[str] = (),
        default: bool = False,
        message_only: bool = False,
        resumable: bool = False,
    ) -> Handler | Callable[[Handler], Handler]:
        """Decorator declaring an async handler as a skill (id and description default to the
        function's name and docstring); ``@agent.skill`` without parentheses works too."""

        def register(handler: Handler) -> Handler:
            skill_id = (id if isinstance(id, str) else None) or _handler_name(handler)
            _check_handler(skill_id, handler)
            doc = (_unpartial(handler).__doc__ or "").strip().split("\n\n")[0]
            self.add_skill(
                Skill(
                    id=skill_id,
                    name=name or skill_id.replace("_", " ").capitalize(),
                    description=description or " ".join(doc.split()) or skill_id,
                    handler=handler,
                    tags=tuple(tags),
                    examples=tuple(examples),
                    input_modes=tuple(input_modes),
                    output_modes=tuple(output_modes),
                    message_only=message_only,
                    resumable=resumable,
                ),
                default=default,
            )
            return handler

        return register(id) if callable(id) else register

    def resolve(self, message: m.Message, request_metadata: m.JsonObject | None = None) -> Skill:
        """The skill a message asks for (``metadata.skillId``), or the default skill."""
        wanted: Any = None
        where = ""  # the params object holding the metadata that names it
        for metadata, holder in ((message.metadata, ".message"), (request_metadata, "")):
            if metadata and SKILL_METADATA_KEY in metadata:
                wanted, where = metadata[SKILL_METADATA_KEY], "$.params" + holder
                break
        if wanted is None:
            skill = self.default_skill
            if skill is None:
                raise InvalidParamsError("this agent declares no skills")
            return skill
        if not isinstance(wanted, str) or wanted not in self._skills:
            known = ", ".join(self._skills) or "none"
            raise InvalidParamsError(
                f"unknown skill {str(wanted)[:80]!r} (this agent has: {known})",
                path=f"{where}.metadata.{SKILL_METADATA_KEY}",
            )
        return self._skills[wanted]

    def check_media_types(self, skill: Skill, message: m.Message) -> None:
        """Refuse a part whose media type ``skill`` does not accept: its own input modes, else
        the agent's defaults (A2A v1.0 §3.1.1, ``ContentTypeNotSupportedError``).  Only media
        types a part names are checked; no modes declared at all means anything goes."""
        modes = skill.input_modes or self.default_input_modes
        for index, part in enumerate(message.parts):
            if part.media_type and modes and not accepts_media_type(modes, part.media_type):
                raise ContentTypeNotSupportedError(
                    f"media type {part.media_type[:100]!r} is not accepted by skill "
                    f"{skill.id!r} (it accepts {', '.join(modes)})",
                    path=f"$.params.message.parts[{index}]",
                )

    def card(
        self,
        interfaces: Iterable[m.AgentInterface],
        *,
        capabilities: m.AgentCapabilities,
        security_schemes: dict[str, m.SecurityScheme] | None = None,
        security_requirements: Iterable[m.SecurityRequirement] = (),
    ) -> m.AgentCard:
        """The agent card for the given served interfaces."""
        return m.AgentCard(
            name=self.name,
            description=self.description,
            version=self.version,
            supported_interfaces=tuple(interfaces),
            capabilities=capabilities,
            default_input_modes=self.default_input_modes,
            default_output_modes=self.default_output_modes,
            skills=tuple(_with_a_tag(skill.card_entry()) for skill in self._skills.values()),
            provider=self.provider,
            documentation_url=self.documentation_url,
            security_schemes=security_schemes or {},
            security_requirements=tuple(security_requirements),
            icon_url=self.icon_url,
        )


def _with_a_tag(entry: m.AgentSkill) -> m.AgentSkill:
    """A2A v1.0 §5.7: ``tags`` is REQUIRED, and a REQUIRED list holds at least one element, so a
    skill declared without tags is listed under its id (the legacy card keeps them as declared)."""
    return entry if entry.tags else attrs.evolve(entry, tags=(entry.id,))


def accepts_media_type(modes: Iterable[str], media_type: str) -> bool:
    """Whether ``media_type`` is one of ``modes``, which may be ``type/*`` or ``*/*``; case and
    parameters (``; charset=utf-8``) do not count.  A bare type (``text``, as older A2A samples
    list it) counts as ``type/*``, and ``*`` as ``*/*``."""
    essence = media_type.partition(";")[0].strip().lower()
    kind = essence.partition("/")[0]
    for mode in modes:
        wanted = mode.partition(";")[0].strip().lower()
        if wanted and "/" not in wanted:
            wanted = "*/*" if wanted == "*" else f"{wanted}/*"
        if wanted in (essence, "*/*", f"{kind}/*"):
            return True
    return False
