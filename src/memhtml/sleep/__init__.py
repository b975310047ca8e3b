"""The sleep run: curation on a branch, reviewed, then merged behind a gate.

Seventeen phases (``contract.SLEEP_PHASES``) run in order on ``sleep/<YYYY-MM-DD>``,
cut from main before any of them; each lands its own commit with trailers that are
the run's only record. A phase's failure is a value, not the run's end. ``review``
shows what the branch would bring, ``merge`` fast-forwards main onto it when nothing
refuses, ``abort`` deletes it, ``resume`` finishes it, ``plan`` says whether a run
would change anything. Nothing here imports an adapter: ``SleepDeps`` is built by the
composition root, which also picks the merge gate.

Modules: ``contract`` (names), ``deps`` (what a run needs), ``phase`` (what a phase
gets and gives), ``ledger`` (pending marks), ``history`` (trailers read back),
``runner`` (run), ``resume``, ``runs`` (status, abort), ``review``, ``merge``,
``plan``, and ``phases`` (the bodies).
"""
