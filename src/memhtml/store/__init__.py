"""The store: a git repository of memory files, behind write and read doors.

Every write door is one reviewable commit, landed by compare-and-swap on the
branch and re-derived when another writer got there first; every read door reads
one parsed version of a commit. The store reaches git, the clock and the file
system only through what ``StoreDeps`` hands it.
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
        BTaskStatus,
        BUnlabel,
        BUnlink,
        BWrite,
        WriteInput,
    )
    from memhtml.store.landing import Landed
    from memhtml.store.layout import LAYOUT_DIRS, archive_path, init_store, slug_of, unique_path
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
    "BTaskStatus",
    "BUnlabel",
    "BUnlink",
    "BWrite",
    "BatchOp",
    "Behind",
    "Finding",
    "InboundLink",
    "Landed",
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
