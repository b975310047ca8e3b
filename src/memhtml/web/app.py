"""``memhtml serve``: the store in a browser, on loopback, through the MCP server's doors.

The app is a Starlette application over one ``StoreGate`` and the MCP server built
on it (``mcp.server.server_and_gate``):

- **Pages** (GET) are rendered on the server from the gate's version of the tip,
  with Jinja2 templates that escape everything they are given; a memory's text is
  the published site's reader of the checked tree. No page loads the whole store.
- **Changes and live answers** go through ``POST /api/tool/NAME``: the body is a
  tool's arguments and the answer its result, from the very tool an agent calls over
  MCP, so argument checks, refusals and their codes are the same at every door, and
  nothing writes around them. The as-you-type search calls ``memory_search`` here.
- **Live**: ``/events`` is a server-sent event naming the branch tip, which moves
  with a commit by the CLI, an agent, a sync or a person's git; the page's
  ``EventSource`` asks again each ``LIVE_SECONDS`` and its script turns a new tip
  into a "the store moved on" notice. No connection is held between asks.

Everything passes ``web.guard`` first (Host, token cookie, same origin and CSRF for a
change, and the security headers). Static files are the package's own: no asset
comes from elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any, Final
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from returns.io import IOResult, IOSuccess
from returns.result import Failure, Result, Success
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from memhtml.compose import Services, error_code, explain, perform
from memhtml.contracts.vocabulary import MEMORY_TYPES
from memhtml.head import HeadVersion
from memhtml.mcp.gate import StoreGate
from memhtml.mcp.server import MemoryServer
from memhtml.sleep.deps import SleepDeps
from memhtml.sleep.errors import SleepError
from memhtml.store import Landed, Store, StoreError
from memhtml.store.site_style import STYLESHEET
from memhtml.web import views
from memhtml.web.guard import Guard, guarded

LIVE_SECONDS: Final = 1.0
"""How often a page asks ``/events`` for the branch tip (its ``retry``): one ref read,
and the head advanced by what changed, which the next page needs anyway."""
ARGUMENTS_MAX: Final = 1_000_000
"""Bytes a tool call's arguments may take: a memory's body is far smaller."""
_SEARCH_FIELDS: Final = ("type", "entity", "tag", "prefix", "as_of")


def _templates() -> Environment:
    env = Environment(loader=PackageLoader("memhtml.web", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      undefined=StrictUndefined, trim_blocks=False)
    env.filters["memory_url"] = views.memory_url
    env.filters["urlpath"] = lambda value: quote(str(value), safe="/")
    env.filters["urlpart"] = lambda value: quote(str(value), safe="")
    env.filters["day"] = lambda value: str(value)[:10]
    env.filters["instant"] = views.instant
    env.filters["leaf"] = lambda value: str(value).rstrip("/").rsplit("/", 1)[-1]
    return env


class WebApp:
    """The routes over one gate and server; ``asgi`` is the guarded application."""

    def __init__(self, services: Services, gate: StoreGate, server: MemoryServer,
                 guard: Guard) -> None:
        self.services = services
        self.gate = gate
        self.server = server
        self.guard = guard
        self.env = _templates()
        from memhtml.web.sleep_start import RunStarter

        self.starter = RunStarter(services.settings.store)
        routes = [
            Route("/", self.home),
            Route("/browse/{directory:path}", self.browse),
            Route("/memory/{path:path}", self.memory),
            Route("/search", self.search),
            Route("/tasks", self.tasks),
            Route("/activity", self.activity),
            Route("/overview", self.overview),
            Route("/sleep", self.sleep_runs),
            Route("/sleep/{run_id}", self.sleep_run),
            Route("/sleep/{run_id}/file", self.sleep_file),
            Route("/api/sleep/progress", self.sleep_progress),
            Route("/api/sleep/{action}", self.sleep_action, methods=["POST"]),
            Route("/entity/{name:path}", partial(self.labelled, "entity")),
            Route("/tag/{name:path}", partial(self.labelled, "tag")),
            Route("/api/tool/{name}", self.tool, methods=["POST"]),
            Route("/api/door/{name}", self.door, methods=["POST"]),
            Route("/events", self.events),
            Route("/static/site.css", self.stylesheet),
            Route("/favicon.ico", self.favicon),
            Mount("/static", StaticFiles(packages=[("memhtml.web", "static")])),
        ]
        self.starlette = Starlette(routes=routes)
        self.asgi = guarded(self.starlette, guard)

    # -- rendering -------------------------------------------------------------

    def _page(self, template: str, context: dict[str, Any], status: int = 200,
              tip: str | None = None) -> HTMLResponse:
        settings = self.services.settings
        if tip is None:
            tip = self._tip()  # the live notice compares the tip the page was made at
        shared = {"csrf": self.guard.csrf, "tip": tip, "store_name": settings.store.name,
                  "branch": settings.branch, "title": "memhtml", "query": None}
        html = self.env.get_template(template).render({**shared, **context})
        return HTMLResponse(html, status_code=status)

    def _problem(self, error: StoreError, tip: str | None = None) -> HTMLResponse:
        from memhtml.contracts.errors import NotFound
        from memhtml.store.errors import Archived, Moved

        moved_to = (error.archived_at if isinstance(error, Archived)
                    else error.moved_to if isinstance(error, Moved) else None)
        status = 404 if isinstance(error, (NotFound, Archived, Moved)) else 400
        return self._page("problem.html", {
            "title": "Not here" if status == 404 else "Refused", "here": "",
            "heading": "Not here" if status == 404 else "Refused",
            "message": explain(error), "moved_to": moved_to}, status, tip)

    def _read(self, door: Callable[[Store, HeadVersion], IOResult[dict[str, Any], StoreError]],
              template: str) -> HTMLResponse:
        """Render ``template`` with what ``door`` reads from the tip's version."""
        def run(store: Store) -> IOResult[tuple[dict[str, Any], str | None], StoreError]:
            return store.head().bind(lambda version: door(store, version).map(
                lambda context: (context, version.sha)))

        match self.gate.run(run):
            case Success((context, tip)):
                return self._page(template, context, tip=tip)
            case Failure(error):
                return self._problem(error)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- pages -------------------------------------------------------------------

    def home(self, request: Request) -> Response:
        return self._read(lambda store, version: IOSuccess(
            {"title": "Memory store", **views.home(version, views.now_of(store))}), "home.html")

    def browse(self, request: Request) -> Response:
        directory = str(request.path_params.get("directory", ""))
        page = _int(request.query_params.get("page"), 1)
        return self._read(lambda store, version: views.folder(
            version, directory, page, views.now_of(store)).map(
                lambda context: {"title": directory or "Browse", **context}), "folder.html")

    def memory(self, request: Request) -> Response:
        path = str(request.path_params["path"])

        def door(store: Store, version: HeadVersion) -> IOResult[dict[str, Any], StoreError]:
            from memhtml.contracts.errors import NotFound
            from memhtml.store.reads import whereabouts_in

            record = version.get(path)
            if record is not None:
                return views.memory(store, version, record, views.now_of(store)).map(
                    lambda context: {"title": record.title, **context})

            def gone(went: Any) -> IOResult[dict[str, Any], StoreError]:
                from returns.io import IOFailure

                failure: StoreError = went if went is not None else NotFound(
                    f"memory {path}")
                return IOFailure(failure)

            return whereabouts_in(store, version, path, None).bind(gone)

        return self._read(door, "memory.html")

    def labelled(self, kind: str, request: Request) -> Response:
        name = str(request.path_params["name"])
        return self._read(lambda store, version: IOSuccess({
            "title": name, **views.labelled(version, kind, name, views.now_of(store))}),
            "label.html")

    def tasks(self, request: Request) -> Response:
        done = request.query_params.get("done") == "1"
        return self._read(lambda store, version: IOSuccess({
            "title": "Tasks", **views.tasks(version, views.now_of(store), done)}), "tasks.html")

    def activity(self, request: Request) -> Response:
        start = request.query_params.get("from")
        if start is not None and not (7 <= len(start) <= 40 and all(
                c in "0123456789abcdef" for c in start)):
            start = None
        return self._read(lambda store, version: views.activity(store, version, start).map(
            lambda context: {"title": "Activity", **context}), "activity.html")

    def overview(self, request: Request) -> Response:
        return self._read(lambda store, version: IOSuccess({
            "title": "Overview", **views.charts(version, views.now_of(store))}), "overview.html")

    # -- the sleep review --------------------------------------------------------------

    def _sleep(self, work: Callable[[SleepDeps], IOResult[dict[str, Any], SleepError]],
               template: str) -> HTMLResponse:
        """Render ``template`` with what ``work`` reads through the run's dependencies,
        on the gate's store thread (the review reads the same repository the doors
        write)."""
        from memhtml.sleep.errors import describe_sleep_error

        def read() -> tuple[dict[str, Any] | None, str | None]:
            deps = self._sleep_deps()
            if isinstance(deps, str):
                return None, deps
            outcome = perform(work(deps))
            if isinstance(outcome, Success):
                return outcome.unwrap(), None
            return None, describe_sleep_error(outcome.failure())

        context, problem = self.gate.serial(read)
        if context is None:
            return self._page("problem.html", {"title": "Sleep", "here": "sleep",
                                               "heading": "Sleep review",
                                               "message": problem, "moved_to": None}, 404)
        return self._page(template, context)

    def _sleep_deps(self) -> SleepDeps | str:
        from memhtml.compose.sleep import head_gate, sleep_deps

        built = sleep_deps(self.services, head_gate)
        match built:
            case Success(deps):
                found: SleepDeps = deps
                return found
            case Failure(error):
                return str(error.reason)
        raise AssertionError("unreachable")  # pragma: no cover

    def sleep_runs(self, request: Request) -> Response:
        from memhtml.web import sleep_views

        return self._sleep(sleep_views.runs, "sleep.html")

    def sleep_run(self, request: Request) -> Response:
        from memhtml.web import sleep_views

        run_id = str(request.path_params["run_id"])
        return self._sleep(lambda deps: sleep_views.run(deps, run_id), "sleep_run.html")

    def sleep_file(self, request: Request) -> Response:
        from memhtml.web import sleep_views

        run_id = str(request.path_params["run_id"])
        path = request.query_params.get("path", "")
        return self._sleep(lambda deps: sleep_views.file(deps, run_id, path),
                           "sleep_file.html")

    async def sleep_action(self, request: Request) -> Response:
        """``merge`` or ``abort`` a run (``{"run": ID}``), or ``reject`` some of its
        changes (``{"run": ID, "paths": [...]}``): the CLI's ``sleep merge``, ``sleep
        abort`` and ``sleep reject``. A refused merge moves nothing and answers its refusal, code
        and reason, as the CLI prints them."""
        action = request.path_params["action"]
        arguments = await _arguments(request)
        if isinstance(arguments, Response):
            return arguments
        run_id = arguments.get("run")
        if action == "start":
            deep = arguments.get("deep", False)
            if set(arguments) - {"deep"} or not isinstance(deep, bool):
                return _refused("start takes deep (true or false) alone",
                                "ERR_INVALID_ARGUMENTS")
            started, why = self.starter.start(deep)
            return JSONResponse({"ok": True, "result": {"started": True}} if started
                                else {"ok": False, "code": "ERR_REFUSED", "error": why},
                                status_code=200 if started else 422)
        if action == "plan":
            if arguments:
                return _refused("plan takes no arguments", "ERR_INVALID_ARGUMENTS")
            planned = await run_in_threadpool(self.gate.serial, self._plan)
            return JSONResponse(planned, status_code=200 if planned["ok"] else 422)
        if action == "reject":
            paths = arguments.get("paths")
            if (set(arguments) != {"run", "paths"} or not isinstance(run_id, str)
                    or not run_id or not isinstance(paths, list) or not paths
                    or not all(isinstance(p, str) and p for p in paths)):
                return _refused("reject takes run (a run id) and paths (the changed files "
                                "to put back, at least one)", "ERR_INVALID_ARGUMENTS")
            rejected = await run_in_threadpool(self.gate.serial,
                                               partial(self._reject, run_id, paths))
            return JSONResponse(rejected, status_code=200 if rejected["ok"] else 422)
        if action not in ("merge", "abort"):
            return _refused(f"there is no sleep action {action!r}: plan, start, merge, "
                            "abort, reject", "ERR_REFUSED")
        if set(arguments) != {"run"} or not isinstance(run_id, str) or not run_id:
            return _refused(f"{action} takes run (a run id)", "ERR_INVALID_ARGUMENTS")
        answer = await run_in_threadpool(self.gate.serial, partial(self._act, action, run_id))
        return JSONResponse(answer, status_code=200 if answer["ok"] else 422)

    def sleep_progress(self, request: Request) -> Response:
        """The run this app started: running or not, its progress lines, its exit code
        and closing summary."""
        return JSONResponse(self.starter.progress())

    def _plan(self) -> dict[str, Any]:
        """``memhtml sleep plan``: would a run change anything, from counts alone."""
        from memhtml.sleep.errors import describe_sleep_error
        from memhtml.sleep.plan import plan_sleep

        deps = self._sleep_deps()
        if isinstance(deps, str):
            return {"ok": False, "code": "ERR_SETTINGS", "error": deps}
        done: Result[Any, SleepError] = perform(plan_sleep(deps))
        if not isinstance(done, Success):
            error = done.failure()
            return {"ok": False, "code": error_code(error), "error": describe_sleep_error(error)}
        plan = done.unwrap()
        return {"ok": True, "result": {
            "verdict": plan.verdict, "changed_since_last_run": plan.changed_since_last_run,
            "transcripts_waiting": plan.transcripts_waiting,
            "dangling_links": plan.dangling_links, "notes": list(plan.notes)}}

    def _reject(self, run_id: str, paths: list[str]) -> dict[str, Any]:
        """``memhtml sleep reject``: one commit on the run's branch."""
        from memhtml.sleep.errors import describe_sleep_error
        from memhtml.sleep.reject import reject_changes

        deps = self._sleep_deps()
        if isinstance(deps, str):
            return {"ok": False, "code": "ERR_SETTINGS", "error": deps}
        done: Result[Any, SleepError] = perform(reject_changes(deps, run_id, paths))
        if not isinstance(done, Success):
            error = done.failure()
            return {"ok": False, "code": error_code(error), "error": describe_sleep_error(error)}
        rejected = done.unwrap()
        return {"ok": True, "result": {
            "run": run_id, "commit": rejected.commit,
            "rejected": [row.path for row in rejected.rejected],
            "relinked": list(rejected.relinked), "related": list(rejected.related)}}

    def _act(self, action: str, run_id: str) -> dict[str, Any]:
        from memhtml.compose.run import merge_refusal_code
        from memhtml.sleep.errors import describe_sleep_error
        from memhtml.sleep.merge import merge_run
        from memhtml.sleep.runs import abort_run

        deps = self._sleep_deps()
        if isinstance(deps, str):
            return {"ok": False, "code": "ERR_SETTINGS", "error": deps}
        done: Result[Any, SleepError] = perform(
            merge_run(deps, run_id) if action == "merge" else abort_run(deps, run_id))
        if not isinstance(done, Success):
            error = done.failure()
            return {"ok": False, "code": error_code(error), "error": describe_sleep_error(error)}
        outcome = done.unwrap()
        if action == "merge" and not outcome.merged:
            return {"ok": False, "code": merge_refusal_code(outcome.refusal),
                    "error": f"refused ({outcome.refusal}): {outcome.reason}"}
        return {"ok": True, "result": {"run": run_id, "action": action}}

    async def search(self, request: Request) -> Response:
        query = request.query_params.get("q", "").strip()
        filters = {k: request.query_params.get(k) or None for k in _SEARCH_FIELDS}
        context: dict[str, Any] = {"title": "Search", "here": "search", "query": query,
                                   "filters": filters, "types": MEMORY_TYPES,
                                   "result": None, "error": None}
        if query:
            ok, answer = await self.call("memory_search", search_arguments(query, filters))
            context["result" if ok else "error"] = answer if ok else answer["error"]
        return await run_in_threadpool(self._page, "search.html", context)

    def favicon(self, request: Request) -> Response:
        """No icon: an empty answer rather than a 404 in every page's console."""
        return Response(status_code=204)

    def stylesheet(self, request: Request) -> Response:
        return Response(STYLESHEET, media_type="text/css")

    # -- the tools and the live stream -------------------------------------------

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        """Call MCP tool ``name``: ``(True, its structured result)`` or ``(False,
        {"code", "error"})`` with the refusal's code and words."""
        result = await self.server.call_tool(name, arguments)
        structured = getattr(result, "structured_content", None)
        found = dict(structured) if isinstance(structured, dict) else {}
        if getattr(result, "is_error", False):
            text = " ".join(getattr(c, "text", "") for c in getattr(result, "content", ()))
            return False, {"code": str(found.get("error") or "ERR_REFUSED"),
                           "error": str(found.get("message") or text)}
        return True, found

    async def tool(self, request: Request) -> Response:
        name = request.path_params["name"]
        arguments = await _arguments(request)
        if isinstance(arguments, Response):
            return arguments
        ok, answer = await self.call(name, arguments)
        return JSONResponse({"ok": ok, **({"result": answer} if ok else answer)},
                            status_code=200 if ok else 422)

    async def door(self, request: Request) -> Response:
        """The three doors no MCP tool offers (an agent's tool list is kept short):
        ``unlink`` (path, rel, target), ``unlabel`` (path, entity), ``move`` (path,
        to). Each is the store door the CLI command calls, through the same gate."""
        name = request.path_params["name"]
        arguments = await _arguments(request)
        if isinstance(arguments, Response):
            return arguments
        wanted = DOORS.get(name)
        if wanted is None:
            return _refused(f"there is no door {name!r}: {', '.join(DOORS)}", "ERR_REFUSED")
        values = [arguments.get(key) for key in wanted]
        extra = sorted(set(arguments) - set(wanted))
        if extra or not all(isinstance(v, str) and v for v in values):
            return _refused(f"{name} takes {', '.join(wanted)} (each a non-empty string)"
                            + (f"; not {', '.join(extra)}" if extra else ""),
                            "ERR_INVALID_ARGUMENTS")
        args = [str(v) for v in values]
        outcome = await run_in_threadpool(self.gate.run, partial(_run_door, name, args))
        match outcome:
            case Success(landed):
                from memhtml.mcp.render import committed

                return JSONResponse({"ok": True, "result": committed(
                    landed, _about(name, args, landed)).model_dump()})
            case Failure(error):
                return _refused(explain(error), error_code(error))
        raise AssertionError("unreachable")  # pragma: no cover

    async def events(self, request: Request) -> Response:
        """The branch tip as one server-sent event, then the end of the answer; the
        page's ``EventSource`` asks again after ``retry``. A stream held open would
        take one of the six connections a browser opens to a host over HTTP/1.1 for
        as long as a tab is open, and the seventh tab's pages would wait forever."""
        tip = await run_in_threadpool(self._tip)
        retry = int(LIVE_SECONDS * 1000)
        return Response(f"retry: {retry}\nevent: tip\ndata: {tip or ''}\n\n",
                        media_type="text/event-stream")

    def _tip(self) -> str | None:
        return self.gate.run(lambda store: store.tip()).value_or(None)


DOORS: Final[dict[str, tuple[str, ...]]] = {
    "unlink": ("path", "rel", "target"), "unlabel": ("path", "entity"), "move": ("path", "to")}


def _run_door(name: str, args: list[str], store: Store) -> IOResult[Landed, StoreError]:
    from memhtml import store as doors

    if name == "unlink":
        return doors.unlink(store, args[0], args[1], args[2])
    if name == "unlabel":
        return doors.unlabel(store, args[0], args[1])
    return doors.move(store, args[0], args[1])


def _about(name: str, args: list[str], landed: Landed) -> str:
    """The path an answer names: where a move put the memory (a folder ending in ``/``
    keeps the name), else the door's own path."""
    if name == "move":
        to = args[1].lstrip("/")
        moved = to + args[0].rsplit("/", 1)[-1] if to.endswith("/") else to
        if moved in landed.paths:
            return moved
    return landed.primary or args[0]


def _refused(words: str, code: str, status: int = 422) -> JSONResponse:
    return JSONResponse({"ok": False, "code": code, "error": words}, status_code=status)


async def _arguments(request: Request) -> dict[str, Any] | Response:
    """A call's JSON object of arguments, or the answer refusing the body.

    The cap is checked before the body is read (a ``Content-Length`` over it) and as
    it arrives (a chunked body has none), so a client announcing or sending gigabytes
    is answered 413 at once and never held in memory. Nesting deeper than the parser
    goes is a ``RecursionError``, not a ``ValueError``: refused the same way, 400."""
    too_large = _refused("the arguments are too large", "ERR_REFUSED", 413)
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > ARGUMENTS_MAX:
        return too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > ARGUMENTS_MAX:
            return too_large
        chunks.append(chunk)
    body = b"".join(chunks)
    try:
        arguments = json.loads(body or b"{}")
    except (ValueError, RecursionError):
        arguments = None
    if not isinstance(arguments, dict):
        return _refused("the body must be a JSON object of arguments", "ERR_REFUSED", 400)
    return arguments


def search_arguments(query: str, filters: dict[str, str | None]) -> dict[str, Any]:
    """``memory_search``'s arguments from the search form's fields."""
    arguments: dict[str, Any] = {"query": query, "limit": 20}
    if filters.get("type"):
        arguments["type"] = [filters["type"]]
    if filters.get("entity"):
        arguments["entity"] = [filters["entity"]]
    if filters.get("tag"):
        arguments["tag"] = [filters["tag"]]
    for key in ("prefix", "as_of"):
        if filters.get(key):
            arguments[key] = filters[key]
    return arguments


def _int(value: str | None, default: int) -> int:
    try:
        return max(1, int(value)) if value is not None else default
    except ValueError:
        return default


def build_app(services: Services, port: int, token: str, address: str = "127.0.0.1"
              ) -> WebApp:
    """The app over the store ``services`` open, for a server at ``address:port``."""
    from memhtml.mcp.server import server_and_gate

    server, gate = server_and_gate(services)
    return WebApp(services, gate, server, Guard(port, token, address))


__all__ = ["WebApp", "build_app", "search_arguments"]
