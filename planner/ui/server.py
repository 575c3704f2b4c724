"""The HTTP side of ``ivm ui``: a Starlette app over one ``Session``, served by uvicorn.

Buttons are JSON POSTs; the page learns of every change through ``/api/events`` (server-sent
events), so a running stream needs no polling from the browser. Every script and style comes from
``static/`` in this package: the page works with no network. Endpoints are plain functions, which
Starlette runs in its thread pool, so a long batch or a Check does not stall the event loop.
"""

from __future__ import annotations

import asyncio
import json
from importlib import resources
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from planner.ui.session import POLICIES, PageError, Session
from planner.ui.streams import CATALOGS, STREAM_KINDS

STATIC = Path(str(resources.files("planner.ui") / "static"))
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"  # a source checkout; pip installs ship Q3 only
POLL_SECONDS = 0.05


def examples() -> list[dict]:
    """The TPC-H queries and the order-book queries of ``examples/``, each with its catalog and stream."""
    found = [{"name": f"TPC-H {path.stem.upper()}", "sql": path.read_text(), "catalog": "tpch", "stream": "window"}
             for path in sorted((EXAMPLES / "tpch").glob("q*.sql"))]
    found += [{"name": f"order book: {path.stem}", "sql": path.read_text(), "catalog": "orderbook",
               "stream": "r" if " from r" in path.read_text().lower() else "orderbook"}
              for path in sorted((EXAMPLES / "orderbook").glob("*.sql")) if path.stem != "schema"]
    if not found:
        q3 = (resources.files("planner.workloads") / "q03.sql").read_text()
        found = [{"name": "TPC-H Q03", "sql": q3, "catalog": "tpch", "stream": "window"}]
    return found


def _answer(action) -> JSONResponse:
    try:
        return JSONResponse(action())
    except PageError as err:
        return JSONResponse({"error": err.as_json()}, status_code=400)


def create_app(session: Session) -> Starlette:
    async def index(request: Request) -> FileResponse:
        return FileResponse(STATIC / "index.html")

    def options(request: Request) -> JSONResponse:
        return JSONResponse({"examples": examples(), "catalogs": list(CATALOGS), "streams": list(STREAM_KINDS),
                             "engines": ["local"], "policies": list(POLICIES)})

    async def load(request: Request) -> JSONResponse:
        data = await request.json()
        return await asyncio.to_thread(_answer, lambda: session.load(data))

    def post(action):
        def endpoint(request: Request) -> JSONResponse:
            return _answer(action)
        return endpoint

    def state(request: Request) -> JSONResponse:
        return JSONResponse(session.state())

    async def events(request: Request) -> StreamingResponse:
        async def stream():
            # a reconnecting EventSource says where it was in Last-Event-ID; a new page in ?after=
            seen = int(request.headers.get("last-event-id") or request.query_params.get("after", session.sequence))
            yield "retry: 1000\n\n"
            while not await request.is_disconnected():
                found = session.events_since(seen)
                if found is None or seen > session.sequence:  # fell behind the log, or the server restarted
                    seen = session.sequence
                    yield f"id: {seen}\ndata: {json.dumps({'type': 'resync'})}\n\n"
                for number, event in found or ():
                    seen = number
                    yield f"id: {number}\ndata: {json.dumps(event)}\n\n"
                await asyncio.sleep(POLL_SECONDS)
        return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store"})

    routes = [
        Route("/", index),
        Route("/api/options", options),
        Route("/api/state", state),
        Route("/api/events", events),
        Route("/api/load", load, methods=["POST"]),
        Route("/api/step", post(session.step), methods=["POST"]),
        Route("/api/start", post(session.start), methods=["POST"]),
        Route("/api/pause", post(session.pause), methods=["POST"]),
        Route("/api/reset", post(session.reset), methods=["POST"]),
        Route("/api/check", post(session.check), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes)


def serve(host: str, port: int, data_dir: Path) -> None:
    """Serve the page until interrupted."""
    session = Session(data_dir)
    print(f"ivm ui: http://{host}:{port}/  (TPC-H data under {data_dir})", flush=True)
    try:
        uvicorn.run(create_app(session), host=host, port=port, log_level="warning", timeout_graceful_shutdown=1)
    finally:
        session.close()
