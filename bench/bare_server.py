"""The baseline for bench/lsp_latency.py: a bare pygls server with one fixed code action."""

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("bare", "0")


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION)
def code_action(ls: LanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    return [
        types.CodeAction(
            title="Fixed action",
            kind=types.CodeActionKind.QuickFix,
            command=types.Command(title="Fixed", command="bare.fixed"),
        )
    ]


if __name__ == "__main__":
    server.start_io()
