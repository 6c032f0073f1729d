"""The continuable setup registry: scope-local contributions to continuable children.

A *contribution* is a synchronous callable that receives the unpublished child's
``AgentSetup`` (its own tool scope, prompt-section scope, descriptor, ...) installs what it wants
there, and returns the disposer of what it installed. The continuation manager applies every
current contribution, in registration order, on the same path for fresh creation and cold
resume (docs/subagents.md, "The continuable setup registry").

Lifecycle of one installed contribution (one *record*): it is released exactly once, either

* by **rollback** — a later contribution of the same batch raised;
* by **revocation** — its registration was removed (immediately, whether the child is still
  provisioning or already resident; the child stays alive without it); or
* by **release** — the child's own disposal (``Installation.release``).

How the continuation manager uses it, for fresh creation and cold resume alike::

    hooks = registry.setup_step()               # one per create/resume call
    agent = await agents.create(header, setup=[compose, hooks.step], commit=hooks.commit)

``hooks.step`` applies the batch and returns the release disposer (the agent registry keeps
it as part of the child's disposal, or calls it when rolling the creation back);
``hooks.commit`` is the commit check run immediately before publication, which fails with
``ACTIVATION_SETUP_REVOKED`` when a contribution of the batch was removed meanwhile. A manager
that needs its own commit check calls ``hooks.commit(setup)`` from it. ``apply`` is the
lower-level form returning the ``Installation`` itself.

The registry knows nothing about tool or section names. It is not thread-safe (the host is
single-threaded asyncio) but is re-entrant: a contribution or disposer may register or remove
registrations, or apply/release other children, while the registry is working.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, NoReturn

from host.disposal import Disposer, dispose_reversed, roll_back
from host.subagents.errors import SubagentError

if TYPE_CHECKING:  # the agent runtime stays unimported until a child is built
    from host.agents.registry import AgentSetup, CommitCheck, SetupStep

Contribution = Callable[["AgentSetup"], Disposer]
"""Installs into an unpublished continuable child; returns the disposer of the installation."""


def _describe(contribution: Contribution) -> str:
    """A readable name for messages (the registry never looks at what a contribution installs)."""
    name = getattr(contribution, "__qualname__", None) or getattr(contribution, "__name__", None)
    return str(name) if name else repr(contribution)


class _Registration:
    """One ``register`` call: the contribution, whether it is open, and its live records."""

    def __init__(self, contribution: Contribution) -> None:
        self.contribution = contribution
        self.open = True
        # insertion-ordered set of the records not yet rolled back, revoked or released
        self.records: dict[_Record, None] = {}

    @property
    def name(self) -> str:
        return _describe(self.contribution)


class _Record:
    """One contribution installed into one child; its disposer runs at most once."""

    def __init__(self, registration: _Registration, child_id: str, disposer: Disposer) -> None:
        self.registration = registration
        self.child_id = child_id
        self._disposer = disposer
        self.done = False
        self.revoked = False

    def finish(self, *, revoked: bool = False) -> None:
        """Run the disposer unless it already ran; marks the record done *before* the call."""
        self.registration.records.pop(self, None)
        if self.done:
            return
        self.done = True
        self.revoked = revoked
        self._disposer()


def _finish_all(records: list[_Record], *, revoked: bool = False) -> list[Exception]:
    """Finish every record, newest first; return the failures (every record is attempted)."""
    failed = dispose_reversed(list(records), lambda record: record.finish(revoked=revoked))
    return [error for _, error in failed]


def _raise_release_failed(message: str, failures: list[Exception]) -> NoReturn:
    """Raise ``ACTIVATION_SETUP_RELEASE_FAILED`` whose ``__cause__`` groups ``failures``."""
    raise SubagentError("ACTIVATION_SETUP_RELEASE_FAILED", message) from ExceptionGroup(
        message, failures
    )


class Installation:
    """The contributions one ``apply`` installed into one child.

    ``commit_check`` re-validates the batch right before publication; ``release`` is the
    child's disposal of whatever is still installed.
    """

    def __init__(self, child_id: str) -> None:
        self.child_id = child_id
        self._records: list[_Record] = []
        self._released = False

    @property
    def released(self) -> bool:
        """True once ``release`` (or a rollback of the batch) has run."""
        return self._released

    @property
    def revoked(self) -> bool:
        """True if a contribution of this batch was revoked (its registration removed)."""
        return any(record.revoked for record in self._records)

    @property
    def active(self) -> int:
        """How many contributions of this batch are still installed."""
        return sum(1 for record in self._records if not record.done)

    def commit_check(self, setup: AgentSetup | None = None) -> None:
        """Fail if the batch can no longer be published: a contribution of it was revoked
        (``SubagentError("ACTIVATION_SETUP_REVOKED")``) or the installation was released.

        ``setup`` is accepted (and ignored) so that the bound method is a ``CommitCheck``. The
        caller (the agent registry) then rolls the creation back, which calls ``release``.
        """
        revoked = [record.registration.name for record in self._records if record.revoked]
        if revoked:
            raise SubagentError(
                "ACTIVATION_SETUP_REVOKED",
                f"setup of child {self.child_id} was revoked before publication: "
                + ", ".join(revoked),
            )
        if self._released:
            raise SubagentError(
                "ACTIVATION_SETUP_REVOKED",
                f"setup of child {self.child_id} was released before publication",
            )

    def release(self) -> None:
        """Release what is still installed, newest first. Idempotent.

        Contributions already revoked (or released) are not released again. Every release is
        attempted; failures raise ``SubagentError("ACTIVATION_SETUP_RELEASE_FAILED")`` whose
        ``__cause__`` is an ``ExceptionGroup`` of them.
        """
        if self._released:
            return
        self._released = True
        failures = _finish_all(list(self._records))
        if failures:
            _raise_release_failed(f"releasing the setup of child {self.child_id} failed", failures)

    def _add(self, record: _Record) -> None:
        self._records.append(record)

    def _rollback(self) -> list[Exception]:
        """Undo the batch (marks the installation released); returns the failures."""
        self._released = True
        return _finish_all(list(self._records))


class SetupHooks(NamedTuple):
    """A single-use ``(step, commit)`` pair for one ``AgentRegistry.create``/``resume`` call."""

    step: SetupStep
    """Applies the batch (``ContinuableSetupRegistry.apply``); returns its release disposer."""
    commit: CommitCheck
    """The batch's ``Installation.commit_check``."""


class ContinuableSetupRegistry:
    """Registered setup contributions for continuable children, and their installations."""

    def __init__(self) -> None:
        self._registrations: list[_Registration] = []

    def __len__(self) -> int:
        """How many registrations are open (current)."""
        return len(self._registrations)

    def register(self, contribution: Contribution) -> Disposer:
        """Add ``contribution`` for every later ``apply`` (never retroactively).

        Returns the disposer that removes it: it first closes the registration to new setups,
        then revokes every installation of it (provisioning or resident) by calling that
        installation's disposer once. Idempotent. Every revocation is attempted; failures
        raise ``SubagentError("ACTIVATION_SETUP_RELEASE_FAILED")`` after all were attempted.
        """
        if not callable(contribution):
            raise TypeError(f"a setup contribution must be callable, not {contribution!r}")
        registration = _Registration(contribution)
        self._registrations.append(registration)

        def remove() -> None:
            if not registration.open:
                return
            registration.open = False  # closed first: no apply from now on uses it
            self._registrations.remove(registration)
            records = list(registration.records)
            registration.records.clear()
            failures = _finish_all(records, revoked=True)
            if failures:
                _raise_release_failed(
                    f"revoking setup contribution {registration.name} failed", failures
                )

        return remove

    def apply(self, setup: AgentSetup) -> Installation:
        """Apply every current contribution to ``setup``, in registration order.

        "Current" means open when ``apply`` starts and still open when its turn comes; one
        registered during the batch waits for the next ``apply``. If a contribution raises (or
        returns something that is not callable) the ones applied in this batch are rolled back,
        newest first, and the original error propagates; if the rollback fails too, one
        ``ExceptionGroup`` holds the original error first, then the rollback failures.

        A contribution removed *during its own call* has its installation revoked as soon as
        it returns; ``commit_check`` then reports the revocation.
        """
        installation = Installation(setup.id)
        try:
            for registration in list(self._registrations):
                if not registration.open:
                    continue
                disposer = registration.contribution(setup)
                if not callable(disposer):
                    raise TypeError(
                        f"setup contribution {registration.name} returned {disposer!r}, "
                        "not a disposer"
                    )
                record = _Record(registration, setup.id, disposer)
                installation._add(record)
                if registration.open:
                    registration.records[record] = None
                else:  # removed while it was installing: revoke what it just installed
                    try:
                        record.finish(revoked=True)
                    except Exception as failure:
                        _raise_release_failed(
                            f"revoking setup contribution {registration.name} failed",
                            [failure],
                        )
        except BaseException as error:
            roll_back(
                error,
                installation._rollback,
                f"setting up child {setup.id} failed and its rollback failed",
            )
            raise
        return installation

    def setup_step(self) -> SetupHooks:
        """A fresh ``(step, commit)`` pair for one agent creation or resume.

        ``step`` is a ``SetupStep``: it calls ``apply`` and returns ``Installation.release``.
        ``commit`` is a ``CommitCheck`` delegating to that installation's ``commit_check``.
        Both are single-use: a second ``step`` call, or ``commit`` before ``step``, raises
        ``RuntimeError``. Usage::

            hooks = registry.setup_step()
            await agents.create(header, setup=[compose, hooks.step], commit=hooks.commit)
        """
        applied: list[Installation] = []

        def step(setup: AgentSetup) -> Disposer:
            if applied:
                raise RuntimeError("setup_step() hooks are single-use; make one per creation")
            installation = self.apply(setup)
            applied.append(installation)
            return installation.release

        def commit(setup: AgentSetup) -> None:
            if not applied:
                raise RuntimeError("the setup commit check ran before its setup step")
            applied[0].commit_check(setup)

        return SetupHooks(step, commit)
