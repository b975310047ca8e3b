"""The store: a git repository of memory files, behind write and read doors.

Every write door is one reviewable commit, landed by compare-and-swap on the
branch and re-derived when another writer got there first; every read door reads
one parsed version of a commit. The store reaches git, the clock and the file
system only through what ``StoreDeps`` hands it.

A store in a temporary directory, opened as the commands open one: a real git
repository with a checkout, a fixed clock and author so every run commits the same.
A write lands in the checkout too; a read answers the summary tier unless told:

>>> import tempfile
>>> from datetime import UTC, datetime
>>> from pathlib import Path
>>> from memhtml.adapters.clock import FixedClock
>>> from memhtml.compose import Settings, init_repository, open_services, value_of
>>> from memhtml.store import WriteInput, init_store, read, search, write
>>> tmp = tempfile.TemporaryDirectory()
>>> root = Path(tmp.name)
>>> _ = value_of(init_repository(root))
>>> settings = Settings(store=root, author_name="Ada", author_email="ada@example.org")
>>> clock = FixedClock(datetime(2026, 1, 6, 9, 0, tzinfo=UTC))
>>> store = value_of(open_services(settings, clock=clock, require_store=False)).store()
>>> value_of(init_store(store.deps)).message.splitlines()[0]
'memhtml init: store layout'
>>> landed = value_of(write(store, WriteInput(
...     title="Deploy window", claim="Deploys to checkout-api happen on Tuesdays.",
...     memory_type="procedural", body=("Never on a Friday.",))))
>>> landed.message.splitlines()[0]
'memhtml write: areas/inbox/deploy-window.html'
>>> (root / "areas/inbox/deploy-window.html").is_file()
True
>>> print(value_of(read(store, "areas/inbox/deploy-window.html")))
Deploys to checkout-api happen on Tuesdays.
<BLANKLINE>
Never on a Friday.
>>> for hit in value_of(search(store, "when do we deploy")):
...     print(f"{hit.score:.4f} {hit.path}  {hit.claim}")
0.0164 areas/inbox/deploy-window.html  Deploys to checkout-api happen on Tuesdays.
>>> tmp.cleanup()
"""

from typing import TYPE_CHECKING

from memhtml._lazy import lazy_exports

if TYPE_CHECKING:
    from memhtml.store.checkout import Behind, checkout_behind, fix_behind
    from memhtml.store.checks import Finding, doctor, stale_generated
    from memhtml.store.deps import StoreDeps
    from memhtml.store.doors import (
        archive,
        batch,
        correct,
        label,
        link,
        move,
        restore,
        task_add,
        task_list,
        task_status,
        unlabel,
        unlink,
        write,
    )
    from memhtml.store.errors import Refused, StoreError, describe
    from memhtml.store.inputs import (
        BArchive,
        BatchOp,
        BCorrect,
        BLabel,
        BLink,
        BMove,
        BRevise,
        BTaskStatus,
        BUnlabel,
        BUnlink,
        BWrite,
        WriteInput,
    )
    from memhtml.store.landing import Landed
    from memhtml.store.layout import LAYOUT_DIRS, archive_path, init_store, slug_of, unique_path
    from memhtml.store.listing import Listing, listing
    from memhtml.store.publish_door import publish
    from memhtml.store.reads import (
        InboundLink,
        OutboundLink,
        Related,
        StoreStatus,
        log,
        read,
        related,
        search,
        status,
        whereabouts,
    )
    from memhtml.store.recovery import Recovered, commit_ops, finish_checkout
    from memhtml.store.session import Store
    from memhtml.store.tasks import TaskRow

_EXPORTS = {
    "BArchive": "inputs",
    "BCorrect": "inputs",
    "BLabel": "inputs",
    "BLink": "inputs",
    "BMove": "inputs",
    "BRevise": "inputs",
    "BTaskStatus": "inputs",
    "BUnlabel": "inputs",
    "BUnlink": "inputs",
    "BWrite": "inputs",
    "BatchOp": "inputs",
    "Behind": "checkout",
    "checkout_behind": "checkout",
    "finish_checkout": "recovery",
    "commit_ops": "recovery",
    "Recovered": "recovery",
    "fix_behind": "checkout",
    "Finding": "checks",
    "InboundLink": "reads",
    "LAYOUT_DIRS": "layout",
    "Landed": "landing",
    "Listing": "listing",
    "OutboundLink": "reads",
    "Refused": "errors",
    "Related": "reads",
    "Store": "session",
    "StoreDeps": "deps",
    "StoreError": "errors",
    "StoreStatus": "reads",
    "TaskRow": "tasks",
    "WriteInput": "inputs",
    "archive": "doors",
    "archive_path": "layout",
    "batch": "doors",
    "correct": "doors",
    "describe": "errors",
    "doctor": "checks",
    "init_store": "layout",
    "label": "doors",
    "link": "doors",
    "listing": "listing",
    "log": "reads",
    "move": "doors",
    "publish": "publish_door",
    "read": "reads",
    "restore": "doors",
    "related": "reads",
    "search": "reads",
    "slug_of": "layout",
    "stale_generated": "checks",
    "status": "reads",
    "task_add": "doors",
    "task_list": "doors",
    "task_status": "doors",
    "unique_path": "layout",
    "unlabel": "doors",
    "unlink": "doors",
    "whereabouts": "reads",
    "write": "doors",
}

__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "LAYOUT_DIRS",
    "BArchive",
    "BCorrect",
    "BLabel",
    "BLink",
    "BMove",
    "BRevise",
    "BTaskStatus",
    "BUnlabel",
    "BUnlink",
    "BWrite",
    "BatchOp",
    "Behind",
    "Finding",
    "InboundLink",
    "Landed",
    "Listing",
    "OutboundLink",
    "Recovered",
    "Refused",
    "Related",
    "Store",
    "StoreDeps",
    "StoreError",
    "StoreStatus",
    "TaskRow",
    "WriteInput",
    "archive",
    "archive_path",
    "batch",
    "checkout_behind",
    "commit_ops",
    "correct",
    "describe",
    "doctor",
    "finish_checkout",
    "fix_behind",
    "init_store",
    "label",
    "link",
    "listing",
    "log",
    "move",
    "publish",
    "read",
    "related",
    "restore",
    "search",
    "slug_of",
    "stale_generated",
    "status",
    "task_add",
    "task_list",
    "task_status",
    "unique_path",
    "unlabel",
    "unlink",
    "whereabouts",
    "write",
]
