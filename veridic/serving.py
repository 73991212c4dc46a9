"""Run an ASGI app (the service, the annotation app) with uvicorn, closing connections whose request line and headers arrive too slowly.

uvicorn (h11) waits for a request's headers as long as the client keeps
the socket open, so 100 sockets that each send a header byte now and then
hold 100 connections for as long as they like (slowloris). The protocol
below arms a timer whenever the connection waits for a request's headers
(new connection, or the next request on a kept-alive one) and closes it
when the headers are not complete within ``header_timeout_s``. The body
has its own deadline in the app (``body_timeout_s``, answered 408).

>>> cls = guarded_h11(header_timeout_s=5)
>>> cls.header_timeout_s
5.0
"""

from __future__ import annotations

from typing import Any

__all__ = ["guarded_h11", "serve_app"]


def guarded_h11(*, header_timeout_s: float) -> type:
    """uvicorn's h11 protocol with a header-read deadline (a class for ``uvicorn.Config(http=...)``)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadlineH11(H11Protocol):
        _header_timer = None

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _waiting_for_headers(self) -> bool:
            return self.cycle is None or self.cycle.response_complete

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if self._waiting_for_headers() and not self.transport.is_closing():
                self.transport.close()

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def handle_events(self) -> None:
            super().handle_events()
            if not self._waiting_for_headers():
                self._disarm()  # the request line and headers are in: the app's body deadline takes over

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()  # the next request on this kept-alive connection gets the same deadline

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

    HeaderDeadlineH11.header_timeout_s = float(header_timeout_s)
    return HeaderDeadlineH11


def serve_app(app: Any, *, host: str, port: int, header_timeout_s: float = 10.0, keep_alive_s: float = 5.0, **kwargs: Any) -> None:
    """``uvicorn.run`` with the header deadline and a short keep-alive (idle kept-alive sockets close after ``keep_alive_s``)."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, http=guarded_h11(header_timeout_s=header_timeout_s), timeout_keep_alive=keep_alive_s, **kwargs)
