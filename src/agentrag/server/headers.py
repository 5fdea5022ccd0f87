"""Security headers on every response.

The web page loads only its own files (`/static/app.js`, `/static/style.css`): no inline script or style, so
the policy allows nothing but the page's origin, and a document's text that ever reached the page as HTML
could not run. FastAPI's Swagger UI and ReDoc pages load their code from a CDN with an inline bootstrap
script; they get the other headers, not this policy.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
API_DOCS = ("/docs", "/redoc")


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = dict(HEADERS)
        if not str(scope.get("path", "")).startswith(API_DOCS):
            extra["content-security-policy"] = CONTENT_SECURITY_POLICY

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                added = [(k.encode(), v.encode()) for k, v in extra.items() if k.encode() not in present]
                message = {**message, "headers": [*message.get("headers", []), *added]}
            await send(message)

        await self.app(scope, receive, with_headers)
